//! The IR data structures: variables and expressions in arenas, blocks keyed by label.

use std::collections::BTreeMap;

use numba_bytecode::Constant;

use crate::global::Global;

/// A block label: the Numba offset (CPython offset + 2) where the block starts.
pub type Label = u32;

/// A variable, by index into [`FunctionIR::vars`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// An expression, by index into [`FunctionIR::exprs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// A source location: line and, when known, column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    pub line: u32,
}

/// A named variable (`a`, `$8load_global.1`, `x.1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarData {
    pub name: String,
    pub loc: Loc,
}

impl VarData {
    /// Temporaries are the names Numba starts with `$`.
    pub fn is_temp(&self) -> bool {
        self.name.starts_with('$')
    }
}

/// Binary operators, as the `operator` module names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    TrueDiv,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    And,
    Or,
    Xor,
    MatMul,
    Lt,
    Le,
    Eq,
    Ne,
    Gt,
    Ge,
    Is,
    IsNot,
    In,
}

impl BinOp {
    /// From a `BINARY_OP` symbol (`+`, `+=`) or a comparison symbol (`<=`, `is not`).
    /// In-place symbols map to their operator; whether it was in place is the caller's.
    pub fn from_symbol(sym: &str) -> Option<BinOp> {
        Some(match sym {
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "is" => BinOp::Is,
            "is not" => BinOp::IsNot,
            "in" => BinOp::In,
            _ => match sym.strip_suffix('=').unwrap_or(sym) {
                "+" => BinOp::Add,
                "-" => BinOp::Sub,
                "*" => BinOp::Mul,
                "/" => BinOp::TrueDiv,
                "//" => BinOp::FloorDiv,
                "%" => BinOp::Mod,
                "**" => BinOp::Pow,
                "<<" => BinOp::LShift,
                ">>" => BinOp::RShift,
                "&" => BinOp::And,
                "|" => BinOp::Or,
                "^" => BinOp::Xor,
                "@" => BinOp::MatMul,
                _ => return None,
            },
        })
    }

    /// The symbol Numba prints (`+`, `//`, `is not`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::TrueDiv => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::LShift => "<<",
            BinOp::RShift => ">>",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::MatMul => "@",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Is => "is",
            BinOp::IsNot => "is not",
            BinOp::In => "in",
        }
    }

    /// The `operator` module function name (`add`, `and_`).
    pub fn operator_name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::TrueDiv => "truediv",
            BinOp::FloorDiv => "floordiv",
            BinOp::Mod => "mod",
            BinOp::Pow => "pow",
            BinOp::LShift => "lshift",
            BinOp::RShift => "rshift",
            BinOp::And => "and_",
            BinOp::Or => "or_",
            BinOp::Xor => "xor",
            BinOp::MatMul => "matmul",
            BinOp::Lt => "lt",
            BinOp::Le => "le",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::Gt => "gt",
            BinOp::Ge => "ge",
            BinOp::Is => "is_",
            BinOp::IsNot => "is_not",
            BinOp::In => "contains",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Pos,
    Neg,
    Invert,
    Not,
}

impl UnaryOp {
    pub fn operator_name(self) -> &'static str {
        match self {
            UnaryOp::Pos => "pos",
            UnaryOp::Neg => "neg",
            UnaryOp::Invert => "invert",
            UnaryOp::Not => "not_",
        }
    }
}

/// Right-hand sides of assignments (Numba's `ir.Expr` plus `Arg`, `Const`, `Global`, `Var`).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Arg {
        index: u32,
        name: String,
    },
    Const(Constant),
    Global {
        name: String,
        value: Global,
    },
    FreeVar {
        index: u32,
        name: String,
        value: Global,
    },
    /// A plain copy of another variable.
    Var(VarId),
    Call {
        func: VarId,
        args: Vec<VarId>,
        kws: Vec<(String, VarId)>,
        vararg: Option<VarId>,
        varkwarg: Option<VarId>,
        form: CallForm,
    },
    BinOp {
        op: BinOp,
        lhs: VarId,
        rhs: VarId,
    },
    InplaceBinOp {
        op: BinOp,
        lhs: VarId,
        rhs: VarId,
    },
    Unary {
        op: UnaryOp,
        value: VarId,
    },
    GetAttr {
        value: VarId,
        attr: String,
    },
    GetItem {
        value: VarId,
        index: VarId,
    },
    StaticGetItem {
        value: VarId,
        index: i64,
        index_var: Option<VarId>,
    },
    Cast {
        value: VarId,
    },
    GetIter {
        value: VarId,
    },
    IterNext {
        value: VarId,
    },
    PairFirst {
        value: VarId,
    },
    PairSecond {
        value: VarId,
    },
    ExhaustIter {
        value: VarId,
        count: u32,
    },
    BuildTuple {
        items: Vec<VarId>,
    },
    BuildList {
        items: Vec<VarId>,
    },
    BuildSet {
        items: Vec<VarId>,
    },
    /// `{k: v, ...}`. `literal_value` holds the keys (and values) known as constants, as
    /// Numba records them for typing literal dicts; `value_indexes` maps each constant key
    /// to the index of the item that wins.
    BuildMap {
        items: Vec<(VarId, VarId)>,
        size: usize,
        literal_value: Option<Vec<(Constant, LiteralValue)>>,
        value_indexes: Vec<(Constant, usize)>,
    },
    /// `phi(...)`: the value from each predecessor; `None` is Numba's `UNDEFINED` (the
    /// variable is not defined on that path).
    Phi {
        incoming: Vec<(Option<VarId>, Label)>,
    },
    /// A nested function (a closure, a lambda, a comprehension's body): its code object,
    /// the tuple of cells it closes over and its defaults tuple.
    MakeFunction {
        code: Box<numba_bytecode::CodeObject>,
        closure: Option<VarId>,
        defaults: Option<VarId>,
    },
    /// `typed_getitem(value=..., dtype=..., index=...)`: an item access whose result type
    /// a rewrite has fixed (`dtype` is that type's name).
    TypedGetItem {
        value: VarId,
        dtype: String,
        index: VarId,
    },
    /// `null()`: a placeholder value some rewrites use.
    Null,
    /// `undef()`: an explicitly undefined value.
    Undef,
    /// A node a user or a later crate defines (Numba's IR extensions: parfors, array
    /// expressions); see [`ExtensionNode`].
    Extension(Box<ExtensionNode>),
    /// `LIST_TO_TUPLE` of the list in register `list`: a placeholder the interpreter's
    /// list-to-tuple peephole replaces with tuple arithmetic.
    ListToTuple {
        list: VarId,
    },
    /// `yield value`; `index` numbers the yield points (set by post-processing, from 1).
    Yield {
        value: VarId,
        index: Option<u32>,
    },
}

/// How an extension node prints itself in IR dumps (its owner's format; Numba's
/// `arrayexpr(expr=..., ty=...)` for array expressions).
pub type ExtensionPrinter = fn(&ExtensionNode, &FunctionIR) -> String;

/// A node a user or a later crate defines, as an expression or a statement (Numba's IR
/// extensions: `arrayexpr`, `parfor`). numba-ir knows only its shape:
///
/// - `operands` are the variables of the enclosing function it reads: the only ones generic
///   passes (liveness, dels, renaming) see;
/// - `blocks` are nested statements local to the node (an array expression's element-wise
///   statements, a parfor's loop body). Their variables live in the function's arenas
///   but are defined and used only inside the node; they may read `operands`;
/// - `attrs` are printed after the operands by the default printer; `printer` replaces it.
///
/// Whatever lowers the node is registered for its `kind` by the crate that owns it.
#[derive(Debug, Clone)]
pub struct ExtensionNode {
    pub kind: String,
    pub operands: Vec<VarId>,
    pub attrs: Vec<(String, String)>,
    pub blocks: BTreeMap<Label, Block>,
    pub printer: Option<ExtensionPrinter>,
    /// How a block dump shows the statement, when not as one padded line with its
    /// variables (Numba's `inst.dump()`: a parfor prints its loop nests and nested
    /// blocks). The text is written as it is, each line ending in a newline.
    pub dumper: Option<ExtensionPrinter>,
}

impl ExtensionNode {
    /// A node with operands and printed attributes, no nested statements.
    pub fn new(kind: impl Into<String>, operands: Vec<VarId>) -> Self {
        ExtensionNode {
            kind: kind.into(),
            operands,
            attrs: Vec::new(),
            blocks: BTreeMap::new(),
            printer: None,
            dumper: None,
        }
    }
}

// Printers are compared by what they print, not by address (function addresses are not
// stable across codegen units).
impl PartialEq for ExtensionNode {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.operands == other.operands
            && self.attrs == other.attrs
            && self.blocks == other.blocks
            && self.printer.is_some() == other.printer.is_some()
    }
}

/// Statements. The last statement of every block is a terminator.
/// How Numba's interpreter built a call. It only decides how the dump prints `args=` and
/// `kws=` (Python tuples or lists), but the dump is part of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallForm {
    /// A user call without keywords: `args=[..], kws=()`.
    Plain,
    /// A user call with keywords: `args=[..], kws=[..]`.
    Keywords,
    /// A call the interpreter synthesises (`bool(pred)`, `slice(a, b)`, `lst.append(x)`):
    /// `args=(..), kws=()`.
    Synthetic,
    /// `f(*args)` / `f(*args, **kw)`: `args=[], kws=[]`.
    Star,
}

/// An argument of a dynamic raise: a constant or a variable.
#[derive(Debug, Clone, PartialEq)]
pub enum RaiseArg {
    Const(Constant),
    Var(VarId),
}

/// A dict value in a `build_map`'s `literal_value`: a constant or a variable's name.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteralValue {
    Known(Constant),
    /// Printed as `_UNKNOWN_VALUE(name)`.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Assign {
        target: VarId,
        value: ExprId,
    },
    SetItem {
        target: VarId,
        index: VarId,
        value: VarId,
    },
    SetAttr {
        target: VarId,
        attr: String,
        value: VarId,
    },
    /// `del target[index]`.
    DelItem {
        target: VarId,
        index: VarId,
    },
    /// `del (target).attr`.
    DelAttr {
        target: VarId,
        attr: String,
    },
    /// `del x`: ends a variable's lifetime (user `del` and the dels post-processing inserts).
    Del {
        var: VarId,
    },
    Raise {
        exception: Option<VarId>,
    },
    /// `raise Cls(args...)` with everything known at compile time (Numba's `StaticRaise`);
    /// `exc_class` is the class's repr, `args` the constant arguments.
    StaticRaise {
        exc_class: Option<String>,
        args: Option<Vec<Constant>>,
    },
    /// A raise inside a `try` body (Numba's `TryRaise`): control goes to the handler.
    TryRaise {
        exception: Option<VarId>,
    },
    /// `target[index] = value` with a constant index (Numba's `StaticSetItem`); `index` is
    /// the constant's repr, `index_var` the variable that held it.
    StaticSetItem {
        target: VarId,
        index: Constant,
        index_var: VarId,
        value: VarId,
    },
    /// `dct[key] = value` while building a map (Numba's `StoreMap`).
    StoreMap {
        dct: VarId,
        key: VarId,
        value: VarId,
    },
    /// `raise Cls(args...)` where some arguments are only known at run time (Numba's
    /// `DynamicRaise`).
    DynamicRaise {
        exc_class: Option<String>,
        args: Vec<RaiseArg>,
    },
    /// `StaticRaise` inside a `try` body.
    StaticTryRaise {
        exc_class: Option<String>,
        args: Option<Vec<Constant>>,
    },
    /// `DynamicRaise` inside a `try` body.
    DynamicTryRaise {
        exc_class: Option<String>,
        args: Vec<RaiseArg>,
    },
    /// `print(args...)` (a rewrite of `call print`).
    Print {
        args: Vec<VarId>,
        vararg: Option<VarId>,
    },
    /// A statement a user or a later crate defines (see [`ExtensionNode`]).
    Extension(Box<ExtensionNode>),
    /// Entering a `with` block on `contextmanager`; the body spans `begin..end` (offsets).
    EnterWith {
        contextmanager: VarId,
        begin: Label,
        end: Label,
    },
    /// Leaving a `with` block.
    PopBlock,
    Return {
        value: VarId,
    },
    Jump {
        target: Label,
    },
    Branch {
        cond: VarId,
        truebr: Label,
        falsebr: Label,
    },
}

impl Stmt {
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            Stmt::Raise { .. }
                | Stmt::StaticRaise { .. }
                | Stmt::DynamicRaise { .. }
                | Stmt::Return { .. }
                | Stmt::Jump { .. }
                | Stmt::Branch { .. }
        )
    }

    /// Labels this statement may transfer control to.
    /// Redirect a jump or branch target (Numba's `replace_target`).
    pub fn replace_target(&mut self, from: Label, to: Label) {
        let fix = |t: &mut Label| {
            if *t == from {
                *t = to;
            }
        };
        match self {
            Stmt::Jump { target } => fix(target),
            Stmt::Branch {
                truebr, falsebr, ..
            } => {
                fix(truebr);
                fix(falsebr);
            }
            _ => {}
        }
    }

    pub fn successors(&self) -> Vec<Label> {
        match self {
            Stmt::Jump { target } => vec![*target],
            Stmt::Branch {
                truebr, falsebr, ..
            } => vec![*truebr, *falsebr],
            _ => vec![],
        }
    }
}

/// A statement with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub stmt: Stmt,
    pub loc: Loc,
}

/// A basic block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub body: Vec<Inst>,
}

impl Block {
    pub fn terminator(&self) -> Option<&Stmt> {
        self.body
            .last()
            .map(|i| &i.stmt)
            .filter(|s| s.is_terminator())
    }

    pub fn is_terminated(&self) -> bool {
        self.terminator().is_some()
    }
}

/// A whole function in Numba IR.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FunctionIR {
    pub name: String,
    pub qualname: String,
    pub filename: String,
    pub firstlineno: u32,
    pub arg_names: Vec<String>,
    /// The position of the `*args` parameter in `arg_names` (`CO_VARARGS`): calls gather
    /// the positional arguments past it into a tuple.
    pub star_param: Option<usize>,
    pub vars: Vec<VarData>,
    pub exprs: Vec<Expr>,
    pub blocks: BTreeMap<Label, Block>,
    /// Where each block starts in the source (Numba's `Block.loc`: the line of its first
    /// bytecode instruction); blocks made later inherit one. Only SSA's phi variables show
    /// it, in their `Var(name, file:line)`.
    pub block_locs: BTreeMap<Label, Loc>,
    /// Whether the code object is a generator function (`CO_GENERATOR`).
    pub is_generator: bool,
    /// Yield points and saved state, computed by post-processing for generators.
    pub generator_info: Option<crate::postproc::GeneratorInfo>,
    /// Binary operators whose right operand is a known constant (Numba's `static_rhs`,
    /// set by the `DetectStaticBinops` rewrite): lowering may specialise on the value
    /// (`x ** 2` as a multiplication).
    pub static_rhs: BTreeMap<ExprId, numba_bytecode::Constant>,
}

impl FunctionIR {
    pub fn var(&self, id: VarId) -> &VarData {
        &self.vars[id.0 as usize]
    }

    pub fn var_name(&self, id: VarId) -> &str {
        &self.vars[id.0 as usize].name
    }

    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    /// Add a variable to the arena.
    pub fn add_var(&mut self, name: impl Into<String>, loc: Loc) -> VarId {
        self.vars.push(VarData {
            name: name.into(),
            loc,
        });
        VarId((self.vars.len() - 1) as u32)
    }

    /// Add an expression to the arena.
    pub fn add_expr(&mut self, e: Expr) -> ExprId {
        self.exprs.push(e);
        ExprId((self.exprs.len() - 1) as u32)
    }

    /// Find a variable by name.
    /// The CFG of the IR's blocks (Numba's `compute_cfg_from_blocks`): entry is the
    /// smallest label, edges in block order and terminator-target order.
    pub fn cfg(&self) -> numba_bytecode::cfg::ControlFlowGraph {
        let entry = self.blocks.keys().next().copied().unwrap_or(0);
        let edges: Vec<(Label, Label)> = self
            .blocks
            .iter()
            .flat_map(|(&l, b)| {
                b.terminator()
                    .map(Stmt::successors)
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |t| (l, t))
            })
            .collect();
        numba_bytecode::cfg::ControlFlowGraph::new(entry, self.blocks.keys().copied(), edges)
    }

    pub fn var_by_name(&self, name: &str) -> Option<VarId> {
        self.vars
            .iter()
            .position(|v| v.name == name)
            .map(|i| VarId(i as u32))
    }

    /// Variables an expression reads.
    pub fn expr_uses(&self, e: &Expr) -> Vec<VarId> {
        match e {
            Expr::Arg { .. } | Expr::Const(_) | Expr::Global { .. } | Expr::FreeVar { .. } => {
                vec![]
            }
            Expr::Var(v)
            | Expr::Unary { value: v, .. }
            | Expr::GetAttr { value: v, .. }
            | Expr::StaticGetItem { value: v, .. }
            | Expr::Cast { value: v }
            | Expr::GetIter { value: v }
            | Expr::IterNext { value: v }
            | Expr::PairFirst { value: v }
            | Expr::PairSecond { value: v }
            | Expr::ExhaustIter { value: v, .. } => vec![*v],
            Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                ..
            } => {
                let mut out = vec![*func];
                out.extend(args);
                out.extend(kws.iter().map(|(_, v)| *v));
                out.extend(vararg);
                out.extend(varkwarg);
                out
            }
            Expr::BinOp { lhs, rhs, .. } | Expr::InplaceBinOp { lhs, rhs, .. } => vec![*lhs, *rhs],
            Expr::GetItem { value, index } => vec![*value, *index],
            Expr::BuildTuple { items } | Expr::BuildList { items } | Expr::BuildSet { items } => {
                items.clone()
            }
            Expr::Phi { incoming } => incoming.iter().filter_map(|(v, _)| *v).collect(),
            Expr::BuildMap { items, .. } => items.iter().flat_map(|(k, v)| [*k, *v]).collect(),
            Expr::MakeFunction {
                closure, defaults, ..
            } => closure.iter().chain(defaults).copied().collect(),
            Expr::Yield { value, .. } | Expr::ListToTuple { list: value } => vec![*value],
            Expr::TypedGetItem { value, index, .. } => vec![*value, *index],
            Expr::Null | Expr::Undef => vec![],
            Expr::Extension(node) => node.operands.clone(),
        }
    }

    /// Variables a statement reads or writes (Numba's `list_vars`).
    pub fn stmt_vars(&self, s: &Stmt) -> Vec<VarId> {
        match s {
            Stmt::Assign { target, value } => {
                let mut v = vec![*target];
                v.extend(self.expr_uses(self.expr(*value)));
                v
            }
            Stmt::SetItem {
                target,
                index,
                value,
            } => vec![*target, *index, *value],
            Stmt::SetAttr { target, value, .. } => vec![*target, *value],
            Stmt::DelItem { target, index } => vec![*target, *index],
            Stmt::DelAttr { target, .. } => vec![*target],
            Stmt::Del { var } => vec![*var],
            Stmt::Raise { exception } | Stmt::TryRaise { exception } => {
                exception.iter().copied().collect()
            }
            Stmt::StaticRaise { .. } | Stmt::StaticTryRaise { .. } | Stmt::PopBlock => vec![],
            Stmt::StaticSetItem {
                target,
                index_var,
                value,
                ..
            } => vec![*target, *index_var, *value],
            Stmt::StoreMap { dct, key, value } => vec![*dct, *key, *value],
            Stmt::DynamicRaise { args, .. } | Stmt::DynamicTryRaise { args, .. } => args
                .iter()
                .filter_map(|a| match a {
                    RaiseArg::Var(v) => Some(*v),
                    RaiseArg::Const(_) => None,
                })
                .collect(),
            Stmt::Print { args, vararg } => args.iter().chain(vararg).copied().collect(),
            Stmt::Extension(node) => node.operands.clone(),
            Stmt::EnterWith { contextmanager, .. } => vec![*contextmanager],
            Stmt::Return { value } => vec![*value],
            Stmt::Jump { .. } => vec![],
            Stmt::Branch { cond, .. } => vec![*cond],
        }
    }
}
