//! Symbolic stack execution (Numba's `byteflow.py`): splits the bytecode into blocks, names
//! every stack value with Numba's temporary names and threads stack values across blocks as
//! phi variables.
//!
//! Each traced instruction records the registers it reads ([`TracedInst::inputs`]) and the
//! ones it creates ([`TracedInst::outputs`]); the order per opcode is documented on
//! [`TracedInst`].

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::cfg::ControlFlowGraph;
use crate::error::BytecodeError;
use crate::instr::{ByteCode, Instruction};
use crate::opcode::BINARY_OP_SYMBOLS;
use crate::pyset::{hash_int, hash_str, hash_tuple, PySet};

/// A register: a stack value named as Numba names it (`$8load_global.1`, `$phi60.0`).
pub type Reg = String;

/// One instruction with the registers it uses.
///
/// Operand order: binary ops `[lhs, rhs] -> [res]`; `CALL` `[func, args...] -> [res]` with
/// `kw_names`; `FOR_ITER` `[iterator] -> [pair, indval, pred]`; `RETURN_VALUE`
/// `[retval] -> [castval]`; `STORE_SUBSCR` `[target, index, value]`; `UNPACK_SEQUENCE`
/// `[iterable] -> [tuple, stores...]`; `BUILD_SLICE` `[start, stop, (step)] -> [slicevar, res]`;
/// `CALL_FUNCTION_EX` `[func, vararg, (varkwarg)] -> [res]`; `MAKE_FUNCTION`
/// `[code, closure?, annotations?, kwdefaults?, defaults?] -> [res]` (presence by flag bits);
/// every other op `[popped operands in stack order] -> [pushed result]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedInst {
    pub offset: u32,
    pub inputs: Vec<Reg>,
    pub outputs: Vec<Reg>,
    /// `co_consts` index of the pending `KW_NAMES`, for `CALL`.
    pub kw_names: Option<u32>,
    /// For `BEFORE_WITH`: the offset where the with-block's exception ranges end.
    pub with_end: Option<u32>,
}

/// What a syntax block on the trace's block stack stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// A `try` body, from an exception-table entry; `end` is the handler.
    Try,
    /// A `with` body; `end` is where its exception ranges end.
    With,
}

/// An entry of the block stack Numba keeps while tracing (`State.make_block`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxBlock {
    /// Identity: Numba compares blocks by object identity (`is`), copies keep the id.
    pub id: u32,
    pub kind: BlockKind,
    /// Handler offset for `Try`, end of the body for `With`.
    pub end: u32,
    /// For `Try`: the end of the exception-table range that opened it.
    pub end_offset: Option<u32>,
    /// Stack depth when the block was made.
    pub entry_stack: usize,
    /// Stack depth the handler expects (the exception entry's depth for `Try`).
    pub stack_depth: usize,
    /// Whether entering the handler also pushes the last instruction offset.
    pub push_lasti: bool,
}

/// An edge leaving a block with the stack it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowEdge {
    pub target: u32,
    pub stack: Vec<Reg>,
    /// The block stack on arrival at `target`.
    pub blockstack: Vec<SyntaxBlock>,
    /// How many registers at the top of `stack` the edge itself created (exception values
    /// pushed when entering a handler).
    pub npush: usize,
}

/// The dataflow of one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockFlow {
    pub offset: u32,
    /// Incoming stack slots (phi registers), bottom first.
    pub phis: Vec<Reg>,
    /// The block stack on entry.
    pub blockstack: Vec<SyntaxBlock>,
    pub insts: Vec<TracedInst>,
    pub edges: Vec<FlowEdge>,
    /// After phi pruning: `(phi, value)` assignments to make before leaving the block.
    pub outgoing_phis: Vec<(Reg, Reg)>,
}

impl BlockFlow {
    /// The innermost `try` active on entry (Numba's `active_try_block`).
    pub fn active_try(&self) -> Option<&SyntaxBlock> {
        self.blockstack
            .iter()
            .rev()
            .find(|b| b.kind == BlockKind::Try)
    }
}

/// Dataflow of a whole function.
#[derive(Debug, Clone)]
pub struct Dataflow {
    pub blocks: BTreeMap<u32, BlockFlow>,
    pub cfg: ControlFlowGraph,
}

impl Dataflow {
    /// A readable dump of the trace: per block the incoming stack, the block stack, each
    /// instruction with the registers it reads and creates, the outgoing edges and the phi
    /// assignments that survived pruning.
    pub fn dump(&self, bc: &ByteCode) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for (pc, b) in &self.blocks {
            let _ = writeln!(out, "block {pc}:");
            let _ = writeln!(out, "  stack in: [{}]", b.phis.join(", "));
            if !b.blockstack.is_empty() {
                let blocks: Vec<String> = b.blockstack.iter().map(SyntaxBlock::describe).collect();
                let _ = writeln!(out, "  blocks: [{}]", blocks.join(", "));
            }
            for ti in &b.insts {
                let name = bc.at(ti.offset).map_or("?", |i| i.opname);
                if name == "CACHE" {
                    continue;
                }
                let _ = write!(out, "  {:>6} {name}", ti.offset);
                if !ti.inputs.is_empty() {
                    let _ = write!(out, " ({})", ti.inputs.join(", "));
                }
                if !ti.outputs.is_empty() {
                    let _ = write!(out, " -> {}", ti.outputs.join(", "));
                }
                if let Some(k) = ti.kw_names {
                    let _ = write!(out, " kw_names={k}");
                }
                if let Some(e) = ti.with_end {
                    let _ = write!(out, " with_end={e}");
                }
                out.push('\n');
            }
            for e in &b.edges {
                let _ = write!(out, "  -> {} [{}]", e.target, e.stack.join(", "));
                if e.npush > 0 {
                    let _ = write!(out, " pushed {}", e.npush);
                }
                out.push('\n');
            }
            for (phi, value) in &b.outgoing_phis {
                let _ = writeln!(out, "  {phi} = {value}");
            }
        }
        out
    }
}

impl SyntaxBlock {
    fn describe(&self) -> String {
        match self.kind {
            BlockKind::Try => format!(
                "try(handler={}, end={}, depth={}{})",
                self.end,
                self.end_offset.unwrap_or(self.end),
                self.stack_depth,
                if self.push_lasti { ", lasti" } else { "" }
            ),
            BlockKind::With => format!("with(end={})", self.end),
        }
    }
}

/// Whether a register holds the NULL that `PUSH_NULL`/`LOAD_GLOBAL` push.
pub fn is_null_reg(r: &str) -> bool {
    r.starts_with("$null$")
}

/// The `operator` function name Numba uses for a `BINARY_OP` symbol (`+` → `add`).
pub fn binop_operator_name(sym: &str) -> Option<&'static str> {
    Some(match sym {
        "+" => "add",
        "-" => "sub",
        "*" => "mul",
        "/" => "truediv",
        "//" => "floordiv",
        "%" => "mod",
        "**" => "pow",
        "<<" => "lshift",
        ">>" => "rshift",
        "&" => "and_",
        "|" => "or_",
        "^" => "xor",
        "@" => "matmul",
        "+=" => "iadd",
        "-=" => "isub",
        "*=" => "imul",
        "/=" => "itruediv",
        "//=" => "ifloordiv",
        "%=" => "imod",
        "**=" => "ipow",
        "<<=" => "ilshift",
        ">>=" => "irshift",
        "&=" => "iand",
        "|=" => "ior",
        "^=" => "ixor",
        "@=" => "imatmul",
        _ => return None,
    })
}

/// Opcodes that cannot raise, so they do not end a block inside a `try` (`_NO_RAISE_OPS`).
const NO_RAISE_OPS: &[&str] = &["LOAD_CONST", "NOP", "LOAD_DEREF", "PRECALL"];

struct State<'a> {
    bc: &'a ByteCode,
    pc_initial: u32,
    pc: u32,
    stack: Vec<Reg>,
    ntemps: usize,
    phis: Vec<Reg>,
    insts: Vec<TracedInst>,
    edges: Vec<FlowEdge>,
    terminated: bool,
    kw_names: Option<u32>,
    blockstack_initial: Vec<SyntaxBlock>,
    blockstack: Vec<SyntaxBlock>,
    /// Source of syntax-block ids, shared by every state of one analysis.
    ids: &'a Cell<u32>,
}

impl<'a> State<'a> {
    fn new(
        bc: &'a ByteCode,
        ids: &'a Cell<u32>,
        pc: u32,
        incoming: &[Reg],
        blockstack: &[SyntaxBlock],
    ) -> Self {
        let mut s = State {
            ids,
            bc,
            pc_initial: pc,
            pc,
            stack: Vec::new(),
            ntemps: 0,
            phis: Vec::new(),
            insts: Vec::new(),
            edges: Vec::new(),
            terminated: false,
            kw_names: None,
            blockstack_initial: blockstack.to_vec(),
            blockstack: blockstack.to_vec(),
        };
        for r in incoming {
            let phi = if is_null_reg(r) {
                s.temp("null$")
            } else {
                s.temp("phi")
            };
            s.phis.push(phi.clone());
            s.stack.push(phi);
        }
        s
    }

    fn inst(&self) -> &'a Instruction {
        // pc always points at a decoded instruction: checked when it is set.
        self.bc
            .at(self.pc)
            .expect("state pc is an instruction offset")
    }

    fn temp(&mut self, prefix: &str) -> Reg {
        let k = self.ntemps;
        self.ntemps += 1;
        if prefix.is_empty() {
            let opname = self.bc.at(self.pc).map(|i| i.opname).unwrap_or("");
            format!("${}{}.{}", self.pc, opname.to_lowercase(), k)
        } else {
            format!("${}{}.{}", prefix, self.pc, k)
        }
    }

    fn err(&self, reason: &str) -> BytecodeError {
        BytecodeError::Decode {
            offset: self.pc.saturating_sub(2),
            reason: reason.into(),
        }
    }

    fn pop(&mut self) -> Result<Reg, BytecodeError> {
        self.stack.pop().ok_or_else(|| self.err("stack underflow"))
    }

    fn pop_n(&mut self, n: usize) -> Result<Vec<Reg>, BytecodeError> {
        if n > self.stack.len() {
            return Err(self.err("stack underflow"));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    fn peek(&self, n: usize) -> Result<Reg, BytecodeError> {
        if n == 0 || n > self.stack.len() {
            return Err(self.err("stack underflow"));
        }
        Ok(self.stack[self.stack.len() - n].clone())
    }

    fn record(&mut self, inputs: Vec<Reg>, outputs: Vec<Reg>) {
        self.insts.push(TracedInst {
            offset: self.pc,
            inputs,
            outputs,
            kw_names: None,
            with_end: None,
        });
    }

    fn fork(&mut self, target: u32, npop: usize) -> Result<(), BytecodeError> {
        self.fork_with(target, npop, 0, None)
    }

    /// Numba's `State.fork`: end the block with an edge to `target` carrying the stack less
    /// `npop` items plus `npush` fresh temporaries, and the block stack less the blocks that
    /// end at or before `target` (plus `extra`).
    fn fork_with(
        &mut self,
        target: u32,
        npop: usize,
        npush: usize,
        extra: Option<SyntaxBlock>,
    ) -> Result<(), BytecodeError> {
        if self.bc.at(target).is_none() {
            return Err(self.err("jump to a non-instruction offset"));
        }
        if npop > self.stack.len() {
            return Err(self.err("stack underflow"));
        }
        let mut stack = self.stack[..self.stack.len() - npop].to_vec();
        for _ in 0..npush {
            stack.push(self.temp(""));
        }
        let mut blockstack = self.blockstack.clone();
        while let Some(top) = blockstack.last() {
            if target >= top.end_offset.unwrap_or(top.end) {
                blockstack.pop();
            } else {
                break;
            }
        }
        blockstack.extend(extra);
        self.edges.push(FlowEdge {
            target,
            stack,
            blockstack,
            npush,
        });
        self.terminated = true;
        Ok(())
    }

    fn top_block(&self, kind: BlockKind) -> Option<SyntaxBlock> {
        self.blockstack
            .iter()
            .rev()
            .find(|b| b.kind == kind)
            .copied()
    }

    fn has_active_try(&self) -> bool {
        self.top_block(BlockKind::Try).is_some()
    }

    /// Whether the block started inside a `with` (Numba then traces no exception edges).
    fn in_with(&self) -> bool {
        self.blockstack_initial
            .iter()
            .any(|b| b.kind == BlockKind::With)
    }

    /// `_adjust_except_stack`: leave for the innermost handler with the stack cut to the
    /// handler's depth plus the exception (and `lasti`) values.
    fn jump_to_handler(&mut self) -> Result<(), BytecodeError> {
        let tryblk = self
            .top_block(BlockKind::Try)
            .ok_or_else(|| self.err("no active try block"))?;
        if let Some(idx) = self.blockstack.iter().position(|b| *b == tryblk) {
            self.blockstack.truncate(idx);
        }
        let npop = self.stack.len().saturating_sub(tryblk.stack_depth);
        let npush = 1 + usize::from(tryblk.push_lasti);
        self.fork_with(tryblk.end, npop, npush, None)
    }

    fn make_block(&self, kind: BlockKind, end: u32) -> SyntaxBlock {
        let id = self.ids.get();
        self.ids.set(id + 1);
        SyntaxBlock {
            id,
            kind,
            end,
            end_offset: None,
            entry_stack: self.stack.len(),
            stack_depth: self.stack.len(),
            push_lasti: false,
        }
    }

    /// `target` is the `arg`-th stack item from the top, for the `*_APPEND`/`*_UPDATE`
    /// family: `[target, value] -> [methodvar, res]`.
    fn container_op(&mut self, depth: usize) -> Result<(), BytecodeError> {
        let value = self.pop()?;
        let target = self.peek(depth)?;
        let var = self.temp("");
        let res = self.temp("");
        self.record(vec![target, value], vec![var, res]);
        Ok(())
    }

    fn unsupported(&self, message: String) -> BytecodeError {
        BytecodeError::Unsupported {
            message,
            opname: None,
            function: self.bc.code.qualname.clone(),
            line: self.inst().line,
        }
    }

    fn unsupported_opcode(&self, opname: &'static str, message: String) -> BytecodeError {
        BytecodeError::Unsupported {
            message,
            opname: Some(opname),
            function: self.bc.code.qualname.clone(),
            line: self.inst().line,
        }
    }

    /// Trace one instruction.
    fn step(&mut self) -> Result<(), BytecodeError> {
        while let Some(top) = self.blockstack.last() {
            if top.end <= self.pc_initial {
                self.blockstack.pop();
            } else {
                break;
            }
        }
        let inst = self.inst();
        let arg = inst.arg_or_zero();
        let name = inst.opname;
        match name {
            "NOP" | "RESUME" | "PRECALL" | "CACHE" | "COPY_FREE_VARS" | "MAKE_CELL" => {
                self.record(vec![], vec![])
            }
            "PUSH_NULL" => {
                let n = self.temp("null$");
                self.stack.push(n);
                self.record(vec![], vec![]);
            }
            "LOAD_GLOBAL" => {
                let res = self.temp("");
                self.record(vec![], vec![res.clone()]);
                if arg & 1 != 0 {
                    let n = self.temp("null$");
                    self.stack.push(n);
                }
                self.stack.push(res);
            }
            "LOAD_FAST" => {
                let var = self
                    .bc
                    .code
                    .localsplus_name(arg)
                    .ok_or_else(|| self.err("LOAD_FAST index out of range"))?
                    .to_string();
                let res = self.temp(&var);
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_CONST" => {
                let res = format!("{}.{}", self.temp("const"), arg);
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_DEREF" | "LOAD_CLOSURE" => {
                let res = self.temp("");
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_ASSERTION_ERROR" => {
                let res = self.temp("assertion_error");
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "STORE_FAST" | "STORE_DEREF" => {
                let v = self.pop()?;
                self.record(vec![v], vec![]);
            }
            "DELETE_FAST" => self.record(vec![], vec![]),
            "LOAD_ATTR" => {
                let item = self.pop()?;
                let res = self.temp("");
                self.record(vec![item], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_METHOD" => {
                let item = self.pop()?;
                let null = self.temp("null$");
                self.stack.push(null);
                let res = self.temp("");
                self.record(vec![item], vec![res.clone()]);
                self.stack.push(res);
            }
            "STORE_ATTR" => {
                let target = self.pop()?;
                let value = self.pop()?;
                self.record(vec![target, value], vec![]);
            }
            "DELETE_ATTR" => {
                let target = self.pop()?;
                self.record(vec![target], vec![]);
            }
            "POP_TOP" => {
                self.pop()?;
            }
            "COPY" => {
                let v = self.peek(arg as usize)?;
                self.stack.push(v);
            }
            "SWAP" => {
                let n = arg as usize;
                let len = self.stack.len();
                if n == 0 || n > len {
                    return Err(self.err("stack underflow"));
                }
                self.stack.swap(len - 1, len - n);
            }
            "UNARY_POSITIVE" | "UNARY_NEGATIVE" | "UNARY_NOT" | "UNARY_INVERT" | "GET_ITER" => {
                let v = self.pop()?;
                let res = self.temp("");
                self.record(vec![v], vec![res.clone()]);
                self.stack.push(res);
            }
            "BINARY_OP" => {
                let sym = BINARY_OP_SYMBOLS
                    .get(arg as usize)
                    .ok_or_else(|| self.err("BINARY_OP argument out of range"))?;
                let opname = binop_operator_name(sym).unwrap_or("op");
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let res = self.temp(&format!("binop_{opname}"));
                self.record(vec![lhs, rhs], vec![res.clone()]);
                self.stack.push(res);
            }
            "COMPARE_OP" | "IS_OP" | "CONTAINS_OP" | "BINARY_SUBSCR" => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let res = self.temp("");
                self.record(vec![lhs, rhs], vec![res.clone()]);
                self.stack.push(res);
            }
            "STORE_SUBSCR" => {
                let index = self.pop()?;
                let target = self.pop()?;
                let value = self.pop()?;
                self.record(vec![target, index, value], vec![]);
            }
            "DELETE_SUBSCR" => {
                let index = self.pop()?;
                let target = self.pop()?;
                self.record(vec![target, index], vec![]);
            }
            "BUILD_TUPLE" | "BUILD_LIST" | "BUILD_SET" => {
                let items = self.pop_n(arg as usize)?;
                let res = self.temp("");
                self.record(items, vec![res.clone()]);
                self.stack.push(res);
            }
            "BUILD_STRING" => {
                let items = self.pop_n(arg as usize)?;
                let ntmps = (arg as usize).saturating_sub(1).max(1);
                let tmps: Vec<Reg> = (0..ntmps).map(|_| self.temp("")).collect();
                let res = tmps[tmps.len() - 1].clone();
                self.record(items, tmps);
                self.stack.push(res);
            }
            "FORMAT_VALUE" => {
                // `!r` and `!a` convert the value with `repr`/`ascii` first (two more
                // temporaries: the function and its result); `!s` is `str`, as no flag.
                let converted = matches!(arg & 3, 2 | 3);
                // With a spec (`f"{x:>8.3f}"`) the spec is on top, the value below it.
                let spec = if arg & 4 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let value = self.pop()?;
                let mut outputs = Vec::new();
                if converted {
                    outputs.push(self.temp(""));
                    outputs.push(self.temp(""));
                }
                let strvar = self.temp("");
                let res = self.temp("");
                outputs.extend([strvar, res.clone()]);
                let mut inputs = vec![value];
                inputs.extend(spec);
                self.record(inputs, outputs);
                self.stack.push(res);
            }
            "BUILD_MAP" => {
                let res = self.temp("");
                let items = self.pop_n(2 * arg as usize)?;
                self.record(items, vec![res.clone()]);
                self.stack.push(res);
            }
            "BUILD_CONST_KEY_MAP" => {
                let keys = self.pop()?;
                let values = self.pop_n(arg as usize)?;
                let mut outputs: Vec<Reg> = (0..arg).map(|_| self.temp("")).collect();
                let res = self.temp("");
                outputs.push(res.clone());
                let mut inputs = vec![keys];
                inputs.extend(values);
                self.record(inputs, outputs);
                self.stack.push(res);
            }
            // The container is `oparg` deep once the value is popped (CPython's
            // `PEEK(oparg)`): a comprehension keeps its iterator above it.
            "LIST_APPEND" | "LIST_EXTEND" | "SET_ADD" | "SET_UPDATE" | "DICT_UPDATE" => {
                self.container_op(arg as usize)?;
            }
            "MAP_ADD" => {
                let value = self.pop()?;
                let key = self.pop()?;
                let target = self.peek(arg as usize)?;
                let var = self.temp("");
                let res = self.temp("");
                self.record(vec![target, key, value], vec![var, res]);
            }
            "PUSH_EXC_INFO" => {
                let tos = self.pop()?;
                let exc = self.temp("exception");
                self.stack.push(exc);
                self.stack.push(tos);
            }
            "POP_EXCEPT" => {
                self.pop()?;
            }
            "CHECK_EXC_MATCH" => {
                let pred = self.temp("predicate");
                let tos = self.pop()?;
                let tos1 = self.peek(1)?;
                self.record(vec![tos1, tos], vec![pred.clone()]);
                self.stack.push(pred);
            }
            "RERAISE" => {
                let exc = self.pop()?;
                if arg != 0 {
                    self.pop()?;
                }
                self.record(vec![exc], vec![]);
                if self.has_active_try() {
                    self.jump_to_handler()?;
                } else {
                    self.terminated = true;
                }
            }
            "WITH_EXCEPT_START" => self.terminated = true,
            "BEFORE_WITH" => {
                let cm = self.pop()?;
                let yielded = self.temp("");
                let exitfn = self.temp("setup_with_exitfn");
                self.stack.push(exitfn.clone());
                self.stack.push(yielded.clone());
                let head = self
                    .bc
                    .find_exception_entry(inst.next)
                    .ok_or_else(|| self.err("BEFORE_WITH without an exception-table entry"))?;
                let end = self
                    .bc
                    .exception_entries
                    .iter()
                    .filter(|e| e.target == head.target)
                    .map(|e| e.end)
                    .fold(head.end, u32::max);
                self.insts.push(TracedInst {
                    offset: self.pc,
                    inputs: vec![cm],
                    outputs: vec![exitfn, yielded],
                    kw_names: None,
                    with_end: Some(end),
                });
                let block = self.make_block(BlockKind::With, end);
                self.blockstack.push(block);
                self.fork(inst.next, 0)?;
            }
            "LIST_TO_TUPLE" => {
                let v = self.pop()?;
                let res = self.temp("");
                self.record(vec![v], vec![res.clone()]);
                self.stack.push(res);
            }
            "BUILD_SLICE" => {
                let n = if arg == 3 { 3 } else { 2 };
                let items = self.pop_n(n)?;
                let slicevar = self.temp("");
                let res = self.temp("");
                self.record(items, vec![slicevar, res.clone()]);
                self.stack.push(res);
            }
            "FOR_ITER" => {
                let iterator = self.peek(1)?;
                let pair = self.temp("");
                let indval = self.temp("");
                let pred = self.temp("");
                self.record(vec![iterator], vec![pair, indval.clone(), pred]);
                self.stack.push(indval);
                let end = inst
                    .jump_target
                    .ok_or_else(|| self.err("FOR_ITER without target"))?;
                self.fork(end, 2)?;
                self.fork(inst.next, 0)?;
            }
            "RETURN_VALUE" => {
                let retval = self.pop()?;
                let castval = self.temp("");
                self.record(vec![retval], vec![castval]);
                self.terminated = true;
            }
            "RAISE_VARARGS" => {
                match arg {
                    0 if self.has_active_try() => {
                        return Err(self.unsupported(
                            "The re-raising of an exception is not yet supported.".into(),
                        ))
                    }
                    0 => self.record(vec![], vec![]),
                    1 => {
                        let exc = self.pop()?;
                        self.record(vec![exc], vec![]);
                    }
                    _ => {
                        return Err(
                            self.unsupported("Multiple argument raise is not supported.".into())
                        )
                    }
                }
                if self.has_active_try() {
                    self.jump_to_handler()?;
                } else {
                    self.terminated = true;
                }
            }
            "POP_JUMP_FORWARD_IF_TRUE"
            | "POP_JUMP_FORWARD_IF_FALSE"
            | "POP_JUMP_BACKWARD_IF_TRUE"
            | "POP_JUMP_BACKWARD_IF_FALSE"
            | "POP_JUMP_FORWARD_IF_NONE"
            | "POP_JUMP_FORWARD_IF_NOT_NONE"
            | "POP_JUMP_BACKWARD_IF_NONE"
            | "POP_JUMP_BACKWARD_IF_NOT_NONE" => {
                let pred = self.pop()?;
                self.record(vec![pred], vec![]);
                let target = inst
                    .jump_target
                    .ok_or_else(|| self.err("jump without target"))?;
                self.fork(inst.next, 0)?;
                if target != inst.next {
                    self.fork(target, 0)?;
                }
            }
            "JUMP_IF_TRUE_OR_POP" | "JUMP_IF_FALSE_OR_POP" => {
                let pred = self.peek(1)?;
                self.record(vec![pred], vec![]);
                let target = inst
                    .jump_target
                    .ok_or_else(|| self.err("jump without target"))?;
                self.fork(inst.next, 1)?;
                self.fork(target, 0)?;
            }
            "JUMP_FORWARD" | "JUMP_BACKWARD" | "JUMP_BACKWARD_NO_INTERRUPT" => {
                self.record(vec![], vec![]);
                let target = inst
                    .jump_target
                    .ok_or_else(|| self.err("jump without target"))?;
                self.fork(target, 0)?;
            }
            "KW_NAMES" => {
                self.kw_names = Some(arg);
            }
            "CALL" => {
                let mut args = self.pop_n(arg as usize)?;
                let callable_or_first = self.pop()?;
                let null_or_callable = self.pop()?;
                let func = if is_null_reg(&null_or_callable) {
                    callable_or_first
                } else {
                    args.insert(0, callable_or_first);
                    null_or_callable
                };
                let res = self.temp("");
                let mut inputs = vec![func];
                inputs.extend(args);
                self.insts.push(TracedInst {
                    offset: self.pc,
                    inputs,
                    outputs: vec![res.clone()],
                    kw_names: self.kw_names.take(),
                    with_end: None,
                });
                self.stack.push(res);
            }
            "CALL_FUNCTION_EX" => {
                let varkwarg = if arg & 1 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let vararg = self.pop()?;
                let func = self.pop()?;
                if self.stack.last().is_some_and(|r| is_null_reg(r)) {
                    self.pop()?;
                }
                let res = self.temp("");
                let mut inputs = vec![func, vararg];
                inputs.extend(varkwarg);
                self.record(inputs, vec![res.clone()]);
                self.stack.push(res);
            }
            "UNPACK_SEQUENCE" => {
                let iterable = self.pop()?;
                let stores: Vec<Reg> = (0..arg).map(|_| self.temp("")).collect();
                let tuple = self.temp("");
                let mut outputs = vec![tuple];
                outputs.extend(stores.iter().cloned());
                self.record(vec![iterable], outputs);
                self.stack.extend(stores.into_iter().rev());
            }
            "RETURN_GENERATOR" => {
                let t = self.temp("");
                self.stack.push(t);
                self.record(vec![], vec![]);
            }
            "YIELD_VALUE" => {
                let v = self.pop()?;
                let res = self.temp("");
                self.record(vec![v], vec![res.clone()]);
                self.stack.push(res);
            }
            "MAKE_FUNCTION" => {
                let code = self.pop()?;
                let mut inputs = vec![code];
                for bit in [0x8, 0x4, 0x2, 0x1] {
                    if arg & bit != 0 {
                        inputs.push(self.pop()?);
                    }
                }
                let res = self.temp("");
                self.record(inputs, vec![res.clone()]);
                self.stack.push(res);
            }
            other => {
                // Numba's rejected set on 3.11, and anything else no handler covers.
                return Err(self.unsupported_opcode(
                    other,
                    format!("Use of unsupported opcode ({other}) found"),
                ));
            }
        }
        Ok(())
    }

    fn starts_new_block(&self) -> bool {
        let inst = self.inst();
        self.bc.labels.contains(&inst.offset) || matches!(inst.opname, "FOR_ITER" | "BEFORE_WITH")
    }

    /// `_guard_with_as`: `with cm as x:` stores the entered value, which Numba rejects.
    fn guard_with_as(&self) -> Result<(), BytecodeError> {
        let inst = self.inst();
        if inst.opname == "BEFORE_WITH"
            && self.bc.at(inst.next).map(|i| i.opname) != Some("POP_TOP")
        {
            return Err(self.unsupported(
                "The 'with (context manager) as (variable):' construct is not supported.".into(),
            ));
        }
        Ok(())
    }

    /// After a non-terminating instruction: Numba's `_run_handle_exception` and the implicit
    /// block split. Returns whether the block ended.
    fn advance(&mut self) -> Result<bool, BytecodeError> {
        let inst = self.inst();
        if !self.in_with() && self.has_active_try() && !NO_RAISE_OPS.contains(&inst.opname) {
            // Every instruction that may raise inside a try ends its block, with an edge to
            // the next instruction and one to the handler.
            self.fork(inst.next, 0)?;
            self.jump_to_handler()?;
            return Ok(true);
        }
        if self.bc.at(inst.next).is_none() {
            return Err(self.err("execution falls off the end of the code"));
        }
        self.pc = inst.next;
        if !self.in_with() {
            if let Some(eh) = self.bc.find_exception_entry(self.pc) {
                let same = self
                    .top_block(BlockKind::Try)
                    .is_some_and(|t| t.end == eh.target);
                if !same {
                    let block = SyntaxBlock {
                        end_offset: Some(eh.end),
                        stack_depth: eh.depth as usize,
                        push_lasti: eh.lasti,
                        ..self.make_block(BlockKind::Try, eh.target)
                    };
                    self.fork_with(self.pc, 0, 0, Some(block))?;
                    return Ok(true);
                }
            }
        }
        if self.starts_new_block() {
            self.guard_with_as()?;
            self.fork(self.pc, 0)?;
            return Ok(true);
        }
        Ok(false)
    }
}

/// Run the symbolic stack execution over a decoded function.
pub fn analyze(bc: &ByteCode) -> Result<Dataflow, BytecodeError> {
    let mut finished: BTreeMap<u32, State> = BTreeMap::new();
    // States in the order they finished: Numba keeps them in a set keyed by
    // `(pc, stack depth)`, whose iteration order decides the CFG's edge insertion order.
    let mut finish_order: PySet<(u32, usize)> = PySet::new();
    let mut pending: VecDeque<(u32, Vec<Reg>, Vec<SyntaxBlock>)> =
        VecDeque::from([(0, Vec::new(), Vec::new())]);
    // Outgoing (phi, value) pairs per block, before pruning.
    let mut outgoing: BTreeMap<u32, Vec<(Reg, Reg)>> = BTreeMap::new();
    let ids = Cell::new(0);
    let mut steps: usize = 0;
    let budget = 64 * (bc.instructions.len() + 16);
    while let Some((pc, incoming, blockstack)) = pending.pop_front() {
        if let Some(done) = finished.get(&pc) {
            if done.phis.len() != incoming.len() {
                return Err(BytecodeError::Decode {
                    offset: pc.saturating_sub(2),
                    reason: "block reached with different stack depths".into(),
                });
            }
            continue;
        }
        let mut state = State::new(bc, &ids, pc, &incoming, &blockstack);
        loop {
            steps += 1;
            if steps > budget {
                return Err(state.err("bytecode trace does not terminate"));
            }
            state.step()?;
            if state.terminated || state.advance()? {
                break;
            }
        }
        for edge in &state.edges {
            // The successor's phis are named from its offset and slot, so they can be
            // mapped before it is traced.
            let succ = State::new(bc, &ids, edge.target, &edge.stack, &[]);
            let out = outgoing.entry(pc).or_default();
            for (phi, value) in succ.phis.iter().zip(&edge.stack) {
                out.push((phi.clone(), value.clone()));
            }
            pending.push_back((edge.target, edge.stack.clone(), edge.blockstack.clone()));
        }
        let nstack = state.phis.len();
        finish_order.add(
            (pc, nstack),
            hash_tuple(&[hash_int(i64::from(pc)), hash_int(nstack as i64)]),
        );
        finished.insert(pc, state);
    }
    let order: Vec<u32> = finish_order.iter().map(|&(pc, _)| pc).collect();
    let pruned = prune_phis(&finished, &outgoing, &order);
    let cfg = ControlFlowGraph::new(
        0,
        order.iter().copied(),
        order
            .iter()
            .flat_map(|pc| finished[pc].edges.iter().map(move |e| (*pc, e.target))),
    );
    let blocks = finished
        .into_iter()
        .filter(|(pc, _)| cfg.nodes.contains(pc))
        .map(|(pc, s)| {
            let outgoing_phis = pruned.get(&pc).cloned().unwrap_or_default();
            (
                pc,
                BlockFlow {
                    offset: pc,
                    phis: s.phis,
                    blockstack: s.blockstack_initial,
                    insts: s.insts,
                    edges: s.edges,
                    outgoing_phis,
                },
            )
        })
        .collect();
    Ok(Dataflow { blocks, cfg })
}

/// Numba's `_prune_phis`: keep the phis used in their block and resolve chains of phis to
/// the values that define them.
///
/// Each block's surviving phi assignments come grouped by the block that owns the phi, in
/// the order Numba's set of finished states yields those blocks (`state_order`).
fn prune_phis(
    states: &BTreeMap<u32, State>,
    outgoing: &BTreeMap<u32, Vec<(Reg, Reg)>>,
    state_order: &[u32],
) -> BTreeMap<u32, Vec<(Reg, Reg)>> {
    let phi_set: BTreeSet<&Reg> = states.values().flat_map(|s| s.phis.iter()).collect();
    let mut used: BTreeSet<Reg> = BTreeSet::new();
    for s in states.values() {
        let regs: BTreeSet<&Reg> = s
            .insts
            .iter()
            .flat_map(|i| i.inputs.iter().chain(&i.outputs))
            .collect();
        used.extend(s.phis.iter().filter(|p| regs.contains(p)).cloned());
    }
    // phi -> {(value, defining block)}
    let mut phismap: BTreeMap<Reg, BTreeSet<(Reg, u32)>> = BTreeMap::new();
    for (&pc, outs) in outgoing {
        for (phi, value) in outs {
            phismap
                .entry(phi.clone())
                .or_default()
                .insert((value.clone(), pc));
        }
    }
    let mut blacklist: BTreeMap<Reg, BTreeSet<(Reg, u32)>> = BTreeMap::new();
    loop {
        let mut changing = false;
        let phis: Vec<Reg> = phismap.keys().cloned().collect();
        for phi in phis {
            let defsites: Vec<(Reg, u32)> = phismap[&phi].iter().cloned().collect();
            let mut add = BTreeSet::new();
            for (rhs, pc) in defsites {
                if phi_set.contains(&rhs) {
                    add.extend(phismap.get(&rhs).cloned().unwrap_or_default());
                    blacklist.entry(phi.clone()).or_default().insert((rhs, pc));
                }
            }
            let entry = phismap.entry(phi.clone()).or_default();
            let before = entry.len();
            entry.extend(add);
            let to_remove = blacklist.get(&phi).cloned().unwrap_or_default();
            if entry.len() != before || entry.iter().any(|d| to_remove.contains(d)) {
                entry.retain(|d| !to_remove.contains(d));
                changing = true;
            }
        }
        if !changing {
            break;
        }
    }
    let mut out: BTreeMap<u32, Vec<(Reg, Reg)>> = BTreeMap::new();
    for owner in state_order {
        let Some(state) = states.get(owner) else {
            continue;
        };
        // `set(state._phis) & used`: CPython iterates the (smaller) phi set, built in
        // phi order, and adds the used ones to the result; both orders are string-hash
        // orders, reproduced here for PYTHONHASHSEED=0.
        let phi_set = PySet::from_keys(state.phis.iter().map(|p| (p, hash_str(p))));
        let owned_set = PySet::from_keys(
            phi_set
                .iter()
                .filter(|p| used.contains(**p))
                .map(|p| (*p, hash_str(p))),
        );
        for &phi in owned_set.iter() {
            for (rhs, pc) in phismap.get(phi).into_iter().flatten() {
                let entry = out.entry(*pc).or_default();
                match entry.iter_mut().find(|(p, _)| p == phi) {
                    Some(slot) => slot.1 = rhs.clone(),
                    None => entry.push((phi.clone(), rhs.clone())),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::{CodeObject, Constant};
    use crate::opcode::{NumbaSupport, PY311};

    /// `RESUME 0; LOAD_CONST 0 (x3); <op> 1; ...caches; RETURN_VALUE`, with one line entry.
    fn code_with(op: u8, caches: u8) -> CodeObject {
        let mut code = vec![151, 0, 100, 0, 100, 0, 100, 0, op, 1];
        code.extend(std::iter::repeat_n(0, 2 * usize::from(caches)));
        code.extend([100, 0, 83, 0]);
        let units = code.len() / 2;
        // One "no column" location entry per code unit, all on line 7.
        let mut linetable = Vec::new();
        for i in 0..units {
            linetable.push(0x80 | (13 << 3));
            linetable.push(if i == 0 { 2 } else { 0 });
        }
        CodeObject {
            argcount: 0,
            posonlyargcount: 0,
            kwonlyargcount: 0,
            stacksize: 8,
            flags: 0,
            code,
            consts: vec![Constant::None],
            names: vec!["n".into()],
            localsplusnames: vec!["v".into()],
            localspluskinds: vec![0x20],
            filename: "t.py".into(),
            name: "probe".into(),
            qualname: "outer.probe".into(),
            firstlineno: 6,
            linetable,
            exceptiontable: vec![],
        }
    }

    #[test]
    fn rejected_opcodes_name_opcode_function_and_line() {
        for (op, info) in PY311.iter() {
            if info.numba != NumbaSupport::Rejected || info.name == "EXTENDED_ARG" {
                continue;
            }
            let bc = ByteCode::decode(code_with(op, info.cache_entries)).unwrap();
            match analyze(&bc) {
                Err(BytecodeError::Unsupported {
                    message,
                    opname,
                    function,
                    line,
                }) => {
                    assert_eq!(opname, Some(info.name));
                    assert_eq!(
                        message,
                        format!("Use of unsupported opcode ({}) found", info.name)
                    );
                    assert_eq!(function, "outer.probe");
                    assert_eq!(line, 7);
                }
                other => panic!("{}: {other:?}", info.name),
            }
        }
    }
}
