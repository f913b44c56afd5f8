//! Lowering one typed function: variables, blocks and the statement walk.
//!
//! Every variable gets a stack slot in the entry block (LLVM's mem2reg turns them into SSA
//! values); each IR block becomes an LLVM block. Phis must have been stripped by the
//! pipeline. Structural expressions (arguments, constants, copies, tuples, pairs) are
//! lowered here; every typed operation goes through the [`Registry`] by the signature type
//! inference recorded for it, its operands first converted to the signature's argument
//! types and its result converted to the type of the variable it is stored into.

use std::collections::HashMap;

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, GlobalValue, PointerValue};
use numba_bytecode::Constant;
use numba_ir::{Expr, ExprId, FunctionIR, GlobalKind, Label, Stmt, VarId};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature, TypingResult};

use crate::model::{lowered, members, model_of, value_type};
use crate::registry::Registry;
use crate::{llvm_err, LinkedFunctions, LowerError, LowerOptions, R};

/// Whether values of `t` hold references to generator objects.
fn holds_generator(t: TypeId) -> bool {
    match t.get() {
        Type::Generator { .. } => true,
        Type::Enumerate(inner) => holds_generator(inner),
        Type::Zip(inners) => inners.into_iter().any(holds_generator),
        Type::BoundFunction { this, .. } => holds_generator(this),
        _ => false,
    }
}

/// The state of lowering one function; implementations receive it to emit code.
pub struct FnLower<'ctx, 'a> {
    pub ctx: &'ctx Context,
    pub module: &'a Module<'ctx>,
    pub b: Builder<'ctx>,
    /// The native function being built.
    pub func: FunctionValue<'ctx>,
    pub ir: &'a FunctionIR,
    pub typing: &'a TypingResult,
    pub registry: &'a Registry,
    pub options: &'a LowerOptions,
    pub linked: &'a dyn LinkedFunctions,
    /// `excinfo**` of the native function.
    pub excinfo: PointerValue<'ctx>,
    /// The source line of the statement being lowered.
    pub line: u32,
    /// The IR block being lowered.
    pub(crate) label: Label,
    /// Other native functions this module calls: (symbol, address), mapped before JIT.
    pub externals: Vec<(String, usize)>,
    retptr: PointerValue<'ctx>,
    slots: Vec<PointerValue<'ctx>>,
    /// Reference-counted variables assigned more than once (loop-carried values after
    /// phis are stripped): a store releases the value it overwrites and a `del` clears
    /// the slot, as Numba's `storevar`/`delvar` do. Their slots start zeroed.
    reassigned: Vec<bool>,
    /// Bound methods that borrow their receiver's reference instead of taking one (see
    /// `borrowed_methods`): no incref when made, no decref at their `del`.
    borrowed: Vec<bool>,
    /// Variables holding generator objects: their slots start zeroed and are zeroed at
    /// their `del`, so that an exception leaving the function releases the generators
    /// its frame still holds (`release_on_error`).
    holds_gen: Vec<bool>,
    /// String additions whose result goes straight back into their left operand
    /// (`s = s + piece`, `s += piece`): lowered as an append that grows the string's
    /// block in place (see `appends_in_place`).
    appends: std::collections::HashSet<ExprId>,
    /// Set while lowering the element operation of a whole-array loop: NumPy's
    /// semantics (division by zero gives inf, nan or 0), not Python's exceptions.
    pub(crate) error_model_override: Option<crate::ErrorModel>,
    blocks: HashMap<Label, BasicBlock<'ctx>>,
    entry: BasicBlock<'ctx>,
    pub(crate) counter: usize,
    /// In functions with `try` blocks: the try depth (i32) and the exception being handled
    /// (an `ExcInfo*` moved out of `*excinfo` when control leaves a try block for its
    /// handler).
    pub(crate) try_depth: Option<PointerValue<'ctx>>,
    pub(crate) caught: Option<PointerValue<'ctx>>,
    /// The constants holding global arrays' elements, by the address of the captured
    /// bytes (each global array is emitted once however often it is loaded).
    pub(crate) frozen: HashMap<usize, GlobalValue<'ctx>>,
    /// Captures too large to freeze into the module, which the code reads in place.
    pub(crate) frozen_data: Vec<std::sync::Arc<[u8]>>,
    /// Set while lowering a generator's `next` function (`crate::generator`).
    pub(crate) gen: Option<crate::generator::NextState<'ctx>>,
    /// New references a conversion made for the statement being lowered (a
    /// character-array item read as the string it holds): released when the statement
    /// ends; whatever keeps one takes a reference of its own.
    pub(crate) temps: Vec<(TypeId, BasicValueEnum<'ctx>)>,
    /// Generator libraries already linked into this module, by their init symbol.
    pub(crate) linked_libraries: std::collections::HashSet<String>,
}

impl<'ctx, 'a> FnLower<'ctx, 'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        func: FunctionValue<'ctx>,
        ir: &'a FunctionIR,
        typing: &'a TypingResult,
        registry: &'a Registry,
        options: &'a LowerOptions,
        linked: &'a dyn LinkedFunctions,
    ) -> R<Self> {
        let entry = ctx.append_basic_block(func, "entry");
        let b = ctx.create_builder();
        b.position_at_end(entry);
        // Helpers without the native signature (a generator's close and finalize) get
        // null for the parameters they lack.
        let param = |i: u32, name: &str| -> R<PointerValue<'ctx>> {
            let null = ctx.ptr_type(inkwell::AddressSpace::default()).const_null();
            if func.count_params() < 2 {
                return Ok(null);
            }
            let p = func
                .get_nth_param(i)
                .ok_or_else(|| LowerError::Llvm(format!("missing {name}")))?
                .into_pointer_value();
            p.set_name(name);
            Ok(p)
        };
        let retptr = param(0, "retptr")?;
        let excinfo = param(1, "excinfo")?;
        if func.count_params() as usize == ir.arg_names.len() + 2 {
            for (i, name) in ir.arg_names.iter().enumerate() {
                if let Some(p) = func.get_nth_param(i as u32 + 2) {
                    p.set_name(&format!("arg.{name}"));
                }
            }
        }
        Ok(FnLower {
            ctx,
            module,
            b,
            func,
            ir,
            typing,
            registry,
            options,
            linked,
            excinfo,
            line: ir.firstlineno,
            label: Label::default(),
            externals: Vec::new(),
            retptr,
            slots: Vec::new(),
            reassigned: Vec::new(),
            borrowed: Vec::new(),
            holds_gen: Vec::new(),
            appends: Default::default(),
            error_model_override: None,
            blocks: HashMap::new(),
            entry,
            counter: 0,
            try_depth: None,
            caught: None,
            frozen: HashMap::new(),
            frozen_data: Vec::new(),
            gen: None,
            linked_libraries: std::collections::HashSet::new(),
            temps: Vec::new(),
        })
    }

    /// The `excinfo**` and return slot parameters (for generator lowering, which builds
    /// its functions around the same walk).
    pub(crate) fn retptr(&self) -> PointerValue<'ctx> {
        self.retptr
    }

    /// The stack slot of a variable.
    pub(crate) fn slot(&self, v: VarId) -> PointerValue<'ctx> {
        self.slots[v.0 as usize]
    }

    /// The error model in force: the function's, or NumPy's inside element-wise array
    /// operations (as Numba's ufunc kernels have it).
    pub fn error_model(&self) -> crate::ErrorModel {
        self.error_model_override
            .unwrap_or(self.options.error_model)
    }

    /// Run `f` under NumPy's error model (`x / 0` is inf, not a ZeroDivisionError), as
    /// ufuncs and element-wise array operations compute.
    pub(crate) fn with_numpy_errors<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let saved = self.error_model_override.replace(crate::ErrorModel::Numpy);
        let r = f(self);
        self.error_model_override = saved;
        r
    }

    /// An `Unsupported` error at the current line.
    pub fn unsupported(&self, message: impl Into<String>) -> LowerError {
        LowerError::Unsupported {
            message: message.into(),
            line: self.line,
        }
    }

    /// Code someone else supplied failed to generate its body here.
    pub fn lowering_error(&self, message: impl Into<String>) -> LowerError {
        LowerError::Lowering {
            message: message.into(),
            line: self.line,
        }
    }

    /// The type lowering uses for a variable.
    pub fn ty(&self, v: VarId) -> TypeId {
        lowered(self.typing.type_of(v))
    }

    /// The empty value of a ghost type.
    pub fn ghost(&self) -> BasicValueEnum<'ctx> {
        self.ctx.const_struct(&[], false).into()
    }

    /// A fresh basic block in the function being built.
    pub fn new_block(&self, name: &str) -> BasicBlock<'ctx> {
        self.ctx.append_basic_block(self.func, name)
    }

    /// A stack slot in the entry block, allocated once however often the current block
    /// runs (and promotable by mem2reg).
    pub fn alloca_in_entry(&self, ty: BasicTypeEnum<'ctx>, name: &str) -> R<PointerValue<'ctx>> {
        let here = self.b.get_insert_block();
        match self.entry.get_first_instruction() {
            Some(i) => self.b.position_before(&i),
            None => self.b.position_at_end(self.entry),
        }
        let slot = self.b.build_alloca(ty, name).map_err(llvm_err)?;
        if let Some(bb) = here {
            self.b.position_at_end(bb);
        }
        Ok(slot)
    }

    /// The declaration of a runtime helper (`runtime.rs`, numba-nrt), mapped at JIT time.
    pub fn runtime_fn(
        &self,
        name: &str,
        ty: inkwell::types::FunctionType<'ctx>,
    ) -> FunctionValue<'ctx> {
        self.module.get_function(name).unwrap_or_else(|| {
            self.module
                .add_function(name, ty, Some(inkwell::module::Linkage::External))
        })
    }

    /// Call a function that returns a value.
    pub fn call_value(
        &self,
        f: FunctionValue<'ctx>,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        self.b
            .build_call(f, args, "")
            .map_err(llvm_err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("call returned void".into()))
    }

    /// Load a variable's value.
    pub fn load(&self, v: VarId) -> R<BasicValueEnum<'ctx>> {
        let t = value_type(self.ctx, self.ty(v))?;
        self.b
            .build_load(t, self.slots[v.0 as usize], self.ir.var_name(v))
            .map_err(llvm_err)
    }

    /// The single expression assigned to `v`, following plain copies.
    pub fn definition(&self, v: VarId) -> Option<&'a Expr> {
        let ir = self.ir;
        let mut cur = v;
        for _ in 0..16 {
            let mut found = None;
            for block in ir.blocks.values() {
                for inst in &block.body {
                    if let Stmt::Assign { target, value } = &inst.stmt {
                        if *target == cur {
                            if found.is_some() {
                                return None;
                            }
                            found = Some(*value);
                        }
                    }
                }
            }
            match ir.expr(found?) {
                Expr::Var(src) => cur = *src,
                e => return Some(e),
            }
        }
        None
    }

    pub(crate) fn lower_body(&mut self) -> R<()> {
        for (i, var) in self.ir.vars.iter().enumerate() {
            let t = lowered(self.typing.typemap[i]);
            let lt = value_type(self.ctx, t).map_err(|_| LowerError::Unsupported {
                message: format!(
                    "variable '{}' of type {t} cannot be lowered by numba-rs yet",
                    var.name
                ),
                line: var.loc.line,
            })?;
            let slot = self.b.build_alloca(lt, &var.name).map_err(llvm_err)?;
            self.slots.push(slot);
        }
        // Assignments nested in extension statements count too: a parfor stores its
        // reductions' and races' final values into variables its body assigns.
        fn count(body: &[numba_ir::Inst], assigned: &mut [u32]) {
            for inst in body {
                match &inst.stmt {
                    Stmt::Assign { target, .. } => assigned[target.0 as usize] += 1,
                    Stmt::Extension(node) => {
                        for b in node.blocks.values() {
                            count(&b.body, assigned);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut assigned = vec![0u32; self.ir.vars.len()];
        for b in self.ir.blocks.values() {
            count(&b.body, &mut assigned);
        }
        self.reassigned = (0..self.ir.vars.len())
            .map(|i| assigned[i] > 1 && crate::nrt::is_refcounted(lowered(self.typing.typemap[i])))
            .collect();
        self.borrowed = borrowed_methods(self.ir, &self.typing.typemap, &assigned);
        self.appends = appends_in_place(self.ir);
        self.holds_gen = (0..self.ir.vars.len())
            .map(|i| holds_generator(lowered(self.typing.typemap[i])))
            .collect();
        // Every slot holding a reference starts empty: a `del` on entry to a block may
        // name a variable one of its predecessors never assigned (it then releases
        // nothing).
        for i in 0..self.ir.vars.len() {
            let t = lowered(self.typing.typemap[i]);
            if self.holds_gen[i] || crate::nrt::is_refcounted(t) {
                let t = value_type(self.ctx, t)?;
                self.b
                    .build_store(self.slots[i], t.const_zero())
                    .map_err(llvm_err)?;
            }
        }
        let has_try = self.ir.exprs.iter().any(|e| {
            matches!(e, Expr::Global { value, .. }
                if matches!(&value.kind, GlobalKind::Intrinsic(n) if n == "mark_try_block"))
        });
        if has_try {
            let i32t = self.ctx.i32_type();
            let ptr = self.ctx.ptr_type(inkwell::AddressSpace::default());
            let depth = self.b.build_alloca(i32t, "try_depth").map_err(llvm_err)?;
            self.b
                .build_store(depth, i32t.const_zero())
                .map_err(llvm_err)?;
            let caught = self.b.build_alloca(ptr, "caught").map_err(llvm_err)?;
            self.b
                .build_store(caught, ptr.const_null())
                .map_err(llvm_err)?;
            self.try_depth = Some(depth);
            self.caught = Some(caught);
        }
        for &label in self.ir.blocks.keys() {
            let bb = self.ctx.append_basic_block(self.func, &format!("B{label}"));
            self.blocks.insert(label, bb);
        }
        let first = *self
            .ir
            .blocks
            .keys()
            .next()
            .ok_or_else(|| self.unsupported("empty function"))?;
        // A generator's `next` enters through its resume switch instead.
        let prologue = if self.gen.is_some() {
            let p = self.new_block("generator_prologue");
            self.b.build_unconditional_branch(p).map_err(llvm_err)?;
            Some(p)
        } else {
            self.b
                .build_unconditional_branch(self.blocks[&first])
                .map_err(llvm_err)?;
            None
        };
        let ir = self.ir;
        for (&label, block) in &ir.blocks {
            self.b.position_at_end(self.blocks[&label]);
            self.label = label;
            for inst in &block.body {
                self.line = inst.loc.line;
                self.lower_stmt(&inst.stmt).map_err(|e| match e {
                    LowerError::Unsupported { message, line: 0 } => LowerError::Unsupported {
                        message,
                        line: inst.loc.line,
                    },
                    e => e,
                })?;
            }
            if !block.is_terminated() {
                self.b.build_unreachable().map_err(llvm_err)?;
            }
        }
        if let Some(p) = prologue {
            self.finish_generator_prologue(p, self.blocks[&first])?;
        }
        self.release_on_error()
    }

    /// Route every exit with an error status through one block that releases the
    /// references the frame still holds (generator objects, arrays, ...).
    fn release_on_error(&mut self) -> R<()> {
        // Every reference the frame holds is in a slot (slots start empty and a `del`
        // empties them), so releasing the non-empty ones frees exactly what is live: an
        // exception from a callee or a parallel region leaks nothing (Numba leaks these).
        // Parallel kernels too (measured in `bench/parallel.py`, 2026-11-25: no kernel
        // slower than without the release path).
        let vars: Vec<VarId> = (0..self.ir.vars.len())
            .filter(|&i| {
                self.holds_gen[i]
                    || (crate::nrt::is_refcounted(lowered(self.typing.typemap[i]))
                        && !self.borrowed[i])
            })
            .map(|i| VarId(i as u32))
            .collect();
        if vars.is_empty() {
            return Ok(());
        }
        let mut exits = Vec::new();
        for bb in self.func.get_basic_blocks() {
            let Some(term) = bb.get_terminator() else {
                continue;
            };
            if term.get_opcode() != inkwell::values::InstructionOpcode::Return {
                continue;
            }
            let Some(inkwell::values::Operand::Value(status)) = term.get_operand(0) else {
                continue;
            };
            let status = status.into_int_value();
            if let Some(c) = status.get_sign_extended_constant() {
                if c == i64::from(crate::STATUS_OK) || c == i64::from(crate::STATUS_STOPIT) {
                    continue;
                }
            }
            exits.push((bb, term, status));
        }
        if exits.is_empty() {
            return Ok(());
        }
        let cleanup = self.new_block("release_on_error");
        self.b.position_at_end(cleanup);
        let phi = self
            .b
            .build_phi(self.ctx.i32_type(), "status")
            .map_err(llvm_err)?;
        for (bb, term, status) in &exits {
            term.erase_from_basic_block();
            self.b.position_at_end(*bb);
            self.b
                .build_unconditional_branch(cleanup)
                .map_err(llvm_err)?;
            phi.add_incoming(&[(status, *bb)]);
        }
        self.b.position_at_end(cleanup);
        for v in vars {
            let t = self.ty(v);
            let x = self.load(v)?;
            if x.is_pointer_value() {
                let some = self
                    .b
                    .build_is_not_null(x.into_pointer_value(), "")
                    .map_err(llvm_err)?;
                let then = self.new_block("release");
                let done = self.new_block("released");
                self.b
                    .build_conditional_branch(some, then, done)
                    .map_err(llvm_err)?;
                self.b.position_at_end(then);
                self.decref(t, x)?;
                self.b.build_unconditional_branch(done).map_err(llvm_err)?;
                self.b.position_at_end(done);
            } else {
                self.decref(t, x)?;
            }
        }
        self.b
            .build_return(Some(&phi.as_basic_value()))
            .map_err(llvm_err)?;
        Ok(())
    }

    pub(crate) fn block(&self, label: Label) -> R<BasicBlock<'ctx>> {
        self.blocks
            .get(&label)
            .copied()
            .ok_or_else(|| LowerError::Llvm(format!("no block {label}")))
    }

    fn lower_stmt(&mut self, stmt: &Stmt) -> R<()> {
        self.lower_stmt_inner(stmt)?;
        let temps = std::mem::take(&mut self.temps);
        let open = self
            .b
            .get_insert_block()
            .is_some_and(|bb| bb.get_terminator().is_none());
        if open {
            for (t, v) in temps {
                self.decref(t, v)?;
            }
        }
        Ok(())
    }

    fn lower_stmt_inner(&mut self, stmt: &Stmt) -> R<()> {
        match stmt {
            Stmt::Assign { target, value } => {
                // An extension node's lowering is registered for its kind; its value is a
                // new reference of the target's type.
                if let Expr::Yield { value: y, index } = self.ir.expr(*value) {
                    return self.lower_yield(*target, *y, index.unwrap_or(0));
                }
                if let Expr::Extension(node) = self.ir.expr(*value) {
                    let f = self.registry.extension(&node.kind)?;
                    let v = f(self, node, Some(*target))?.ok_or_else(|| {
                        self.unsupported(format!("the {} node gave no value", node.kind))
                    })?;
                    return self.store_var(*target, v);
                }
                // A list literal: a new list of the target's type.
                if let Expr::BuildList { items } = self.ir.expr(*value) {
                    let vals = items
                        .iter()
                        .map(|v| Ok((self.load(*v)?, self.ty(*v))))
                        .collect::<R<Vec<_>>>()?;
                    let v = crate::impls::lists::build(self, self.ty(*target), &vals)?;
                    return self.store_var(*target, v);
                }
                if let Expr::BuildMap { items, .. } = self.ir.expr(*value) {
                    let vals = items
                        .iter()
                        .map(|(k, v)| {
                            Ok(((self.load(*k)?, self.ty(*k)), (self.load(*v)?, self.ty(*v))))
                        })
                        .collect::<R<Vec<_>>>()?;
                    let v = crate::impls::dicts::build(self, self.ty(*target), &vals)?;
                    return self.store_var(*target, v);
                }
                if let Expr::BuildSet { items } = self.ir.expr(*value) {
                    let vals = items
                        .iter()
                        .map(|v| Ok((self.load(*v)?, self.ty(*v))))
                        .collect::<R<Vec<_>>>()?;
                    let v = crate::impls::sets::build(self, self.ty(*target), &vals)?;
                    return self.store_var(*target, v);
                }
                let (v, from) = self.lower_expr(*value)?;
                let temps_before = self.temps.len();
                let v = self.cast(v, from, self.ty(*target))?;
                // A conversion's new string is the statement's: the variable takes its own.
                let converted = self.temps.len() > temps_before;
                // A variable owns one reference: structural expressions borrow theirs
                // (copies, arguments, items, views), calls and operators return new ones.
                let borrowed = match self.ir.expr(*value) {
                    Expr::Call { .. }
                    | Expr::BinOp { .. }
                    | Expr::InplaceBinOp { .. }
                    | Expr::Unary { .. } => false,
                    // A generator hands out a new reference with each value.
                    Expr::IterNext { value: it } => {
                        !matches!(self.ty(*it).get(), Type::Generator { .. })
                    }
                    // An advanced index makes a new array, indexing a string a new
                    // string, an extension's `operator.getitem` a call's result.
                    Expr::GetItem { .. } | Expr::StaticGetItem { .. } => {
                        !self.sig(*value).is_ok_and(|s| {
                            matches!(s.key, ImplKey::Dispatcher { .. })
                                || s.args.first() == Some(&UNICODE)
                                || s.args.first() == Some(&BYTES)
                                || (matches!(s.args[0].get(), Type::List { .. })
                                    && s.args
                                        .get(1)
                                        .is_some_and(|i| matches!(i.get(), Type::Slice(_))))
                                || (s.args.len() == 2
                                    && numba_typeinfer::numpy::index_array(s.args[0], s.args[1])
                                        .is_some_and(|(_, advanced)| advanced))
                        })
                    }
                    // An extension attribute (`overload_attribute`, a jitclass
                    // property) is a call: its result is a new reference.
                    Expr::GetAttr { .. } => !self
                        .sig(*value)
                        .is_ok_and(|s| matches!(s.key, ImplKey::Dispatcher { .. })),
                    _ => true,
                };
                if (converted || borrowed)
                    && crate::nrt::is_refcounted(self.ty(*target))
                    && !self.borrowed[target.0 as usize]
                {
                    self.incref(self.ty(*target), v)?;
                }
                self.store_var(*target, v)?;
            }
            Stmt::Return { value } if self.gen.is_some() => self.generator_return(*value)?,
            Stmt::Return { value } => {
                let ret = lowered(self.typing.return_type);
                let v = self.load(*value)?;
                let temps_before = self.temps.len();
                let v = self.cast(v, self.ty(*value), ret)?;
                // The result takes a conversion's new reference.
                self.temps.truncate(temps_before);
                self.return_value(v, ret)?;
            }
            Stmt::Jump { target } => {
                self.b
                    .build_unconditional_branch(self.block(*target)?)
                    .map_err(llvm_err)?;
            }
            Stmt::Branch {
                cond,
                truebr,
                falsebr,
            } => {
                let c = self.load(*cond)?;
                let c = self.truth(c, self.ty(*cond))?;
                self.b
                    .build_conditional_branch(c, self.block(*truebr)?, self.block(*falsebr)?)
                    .map_err(llvm_err)?;
            }
            Stmt::Raise { exception } => self.raise_var(*exception, false)?,
            // Inside a `try`: the exception becomes pending and control goes on to the
            // handler (the block ends with `end_try_block` and a jump to it).
            Stmt::TryRaise { exception } => self.raise_var(*exception, true)?,
            Stmt::StaticRaise { exc_class, args } => {
                self.static_raise(exc_class.as_deref(), args.as_deref(), false)?
            }
            Stmt::StaticTryRaise { exc_class, args } => {
                self.static_raise(exc_class.as_deref(), args.as_deref(), true)?
            }
            Stmt::DynamicRaise { exc_class, args } => {
                self.dynamic_raise(exc_class.as_deref(), args, false)?
            }
            Stmt::DynamicTryRaise { exc_class, args } => {
                self.dynamic_raise(exc_class.as_deref(), args, true)?
            }
            Stmt::Print { args, vararg: None } => {
                // `print` takes its arguments as they are: literal strings keep their value.
                let sig = Signature {
                    ret: NONE,
                    args: args.iter().map(|&a| self.ty(a)).collect(),
                    key: ImplKey::Function("print".into()),
                };
                let vals = args.iter().map(|&a| self.load(a)).collect::<R<Vec<_>>>()?;
                self.call_impl(&sig, &vals)?;
            }
            Stmt::Extension(node) => {
                let f = self.registry.extension(&node.kind)?;
                f(self, node, None)?;
            }
            Stmt::Del { var } => {
                if crate::nrt::is_refcounted(self.ty(*var)) && !self.borrowed[var.0 as usize] {
                    let v = self.load(*var)?;
                    self.decref(self.ty(*var), v)?;
                    // Zeroed (as Numba's `delvar` does), so that a later `del` of it on
                    // the same path releases nothing: a block's dels on entry cover every
                    // predecessor, one of which may have deleted it already (`while a and
                    // b:` exits from two blocks). LLVM removes the store where unneeded.
                    let zero = v.get_type().const_zero();
                    self.b
                        .build_store(self.slots[var.0 as usize], zero)
                        .map_err(llvm_err)?;
                }
            }
            // An extension's `operator.delitem`: a call.
            Stmt::DelItem { target, index }
                if self.typing.delitem_calls.contains_key(&(*target, *index)) =>
            {
                let sig = self.typing.delitem_calls[&(*target, *index)].clone();
                let vals = self.operands(&[*target, *index], &sig)?;
                let r = self.call_impl(&sig, &vals)?;
                self.decref(lowered(sig.ret), r)?;
            }
            Stmt::DelItem { target, index }
                if matches!(self.ty(*target).get(), Type::Dict { .. }) =>
            {
                let (d, k) = (self.load(*target)?, self.load(*index)?);
                self.dict_delitem(self.ty(*target), d, self.ty(*index), k)?;
            }
            Stmt::DelItem { target, index }
                if matches!(self.ty(*target).get(), Type::List { .. }) =>
            {
                let (l, i) = (self.load(*target)?, self.load(*index)?);
                crate::impls::lists::delitem(self, self.ty(*target), self.ty(*index), l, i)?;
            }
            Stmt::SetAttr {
                target,
                attr,
                value,
            } if self
                .typing
                .setattr_calls
                .contains_key(&(*target, attr.clone(), *value)) =>
            {
                // A jitclass property's setter: a call with the receiver first.
                let sig = self.typing.setattr_calls[&(*target, attr.clone(), *value)].clone();
                let vals = self.operands(&[*target, *value], &sig)?;
                let r = self.call_impl(&sig, &vals)?;
                self.decref(lowered(sig.ret), r)?;
            }
            Stmt::SetAttr {
                target,
                attr,
                value,
            } if numba_typeinfer::jitclass::instance_of(lowered(self.ty(*target))).is_some() => {
                let tt = lowered(self.ty(*target));
                let inst = numba_typeinfer::jitclass::instance_of(tt).unwrap_or(tt);
                let obj = self.load(*target)?;
                let obj = self.cast(obj, tt, inst)?;
                let x = self.load(*value)?;
                self.instance_setattr(inst, obj, attr, x, self.ty(*value))?;
            }
            // An extension's `operator.setitem` (a jitclass's `__setitem__`): a call.
            Stmt::SetItem {
                target,
                index,
                value,
            } if self
                .typing
                .setitem_calls
                .contains_key(&(*target, *index, *value)) =>
            {
                let sig = self.typing.setitem_calls[&(*target, *index, *value)].clone();
                let vals = self.operands(&[*target, *index, *value], &sig)?;
                let r = self.call_impl(&sig, &vals)?;
                self.decref(lowered(sig.ret), r)?;
            }
            Stmt::SetItem {
                target,
                index,
                value,
            } => {
                let sig = Signature {
                    ret: NONE,
                    args: vec![self.ty(*target), self.ty(*index), self.ty(*value)],
                    key: ImplKey::SetItem,
                };
                let f = self.registry.lookup(&sig)?;
                let vals = [self.load(*target)?, self.load(*index)?, self.load(*value)?];
                f(self, &sig, &vals)?;
            }
            other => {
                return Err(self.unsupported(format!(
                    "the statement `{}` is not supported by numba-rs yet",
                    self.ir.stmt_to_string(other).trim()
                )))
            }
        }
        Ok(())
    }

    /// Store a new reference into `target`'s slot, releasing the value it overwrites when
    /// the variable is assigned more than once.
    pub(crate) fn store_var(&mut self, target: VarId, v: BasicValueEnum<'ctx>) -> R<()> {
        let slot = self.slots[target.0 as usize];
        if !self.reassigned[target.0 as usize] {
            self.b.build_store(slot, v).map_err(llvm_err)?;
            return Ok(());
        }
        let old = self.load(target)?;
        self.b.build_store(slot, v).map_err(llvm_err)?;
        self.decref(self.ty(target), old)
    }

    /// Store `v` (of type `t`, the return type) through `retptr` and return OK.
    pub(crate) fn return_value(&mut self, v: BasicValueEnum<'ctx>, t: TypeId) -> R<()> {
        self.release_caught()?;
        let mem = model_of(t)?.store_memory(self.ctx, &self.b, t, v)?;
        self.b.build_store(self.retptr, mem).map_err(llvm_err)?;
        self.b
            .build_return(Some(
                &self.ctx.i32_type().const_int(crate::STATUS_OK as u64, true),
            ))
            .map_err(llvm_err)?;
        Ok(())
    }

    fn sig(&self, id: ExprId) -> R<Signature> {
        self.typing
            .calltypes
            .get(&id)
            .cloned()
            .ok_or_else(|| self.unsupported("operation was not typed"))
    }

    /// Load operands and convert them to the signature's argument types.
    fn operands(&mut self, vars: &[VarId], sig: &Signature) -> R<Vec<BasicValueEnum<'ctx>>> {
        let mut out = Vec::with_capacity(vars.len());
        for (&v, &to) in vars.iter().zip(&sig.args) {
            let x = self.load(v)?;
            out.push(self.cast(x, self.ty(v), lowered(to))?);
        }
        Ok(out)
    }

    /// The signature of a scalar operator on these operand types, as typing resolves it
    /// (for implementations that apply operators to parts of their operands).
    pub fn registry_sig(&self, op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
        numba_typeinfer::context::binop_signature(op, lhs, rhs)
    }

    /// Run the registered implementation of `sig` on `vals`.
    pub fn call_impl(
        &mut self,
        sig: &Signature,
        vals: &[BasicValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        let f = self.registry.lookup(sig)?;
        let v = f(self, sig, vals)?;
        // An implementation must give a value of the type typing promised: a mismatch
        // would be stored over memory of another shape.
        let want = crate::model::value_type(self.ctx, lowered(sig.ret))?;
        if v.get_type() != want {
            return Err(LowerError::Llvm(format!(
                "the implementation of {}{sig} returned {} instead of {want}",
                sig.key.describe(),
                v.get_type()
            )));
        }
        Ok(v)
    }

    fn lower_expr(&mut self, id: ExprId) -> R<(BasicValueEnum<'ctx>, TypeId)> {
        let ir = self.ir;
        let e = ir.expr(id);
        Ok(match e {
            Expr::Arg { index, .. } if self.gen.is_some() => {
                let t = lowered(self.typing.arg_types[*index as usize]);
                (self.generator_arg(*index as usize)?, t)
            }
            Expr::Arg { index, .. } => {
                let t = lowered(self.typing.arg_types[*index as usize]);
                let p = self
                    .func
                    .get_nth_param(*index + 2)
                    .ok_or_else(|| LowerError::Llvm("missing argument".into()))?;
                (p, t)
            }
            Expr::Const(c) => self.constant(c)?,
            Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
                GlobalKind::Const(c) => self.constant(c)?,
                GlobalKind::Array(_)
                | GlobalKind::Scalar(_)
                | GlobalKind::Tuple(_)
                | GlobalKind::Slice(..) => self.frozen_global(&value.kind)?,
                // A C function: its address.
                GlobalKind::CFunction {
                    address, signature, ..
                } => {
                    let (ret, args) = numba_typeinfer::parse_signature(signature)
                        .map_err(|e| self.unsupported(e))?;
                    let t = intern(Type::ExternalFunctionPointer {
                        args,
                        ret: ret.unwrap_or(NONE),
                    });
                    let addr = self.ctx.i64_type().const_int(*address, false);
                    let p = self
                        .b
                        .build_int_to_ptr(
                            addr,
                            self.ctx.ptr_type(inkwell::AddressSpace::default()),
                            "cfunc",
                        )
                        .map_err(llvm_err)?;
                    (p.into(), t)
                }
                // A user's data-less value: its type is all there is.
                GlobalKind::UserValue {
                    type_code,
                    type_name,
                } => {
                    let t = TypeId(*type_code);
                    // A data-less value: the ghost, or an opaque type's pointer (null,
                    // Numba's dummy value).
                    let opaque = matches!(t.get(), Type::Opaque { .. })
                        && crate::model::user::members(t).is_none();
                    if !opaque && !crate::model::model_of(t)?.is_ghost() {
                        return Err(self.unsupported(format!(
                            "a global value of the type {type_name}, which has data, cannot be \
                             frozen into compiled code yet"
                        )));
                    }
                    (crate::model::value_type(self.ctx, t)?.const_zero(), t)
                }
                _ => (self.ghost(), NONE),
            },
            // Unpacking a list: its items as a tuple, the length checked.
            Expr::ExhaustIter { value: v, count }
                if matches!(self.ty(*v).get(), Type::List { .. }) =>
            {
                let l = self.load(*v)?;
                let t = crate::impls::lists::unpack(self, self.ty(*v), l, *count)?;
                (
                    t,
                    intern(Type::UniTuple(
                        crate::impls::lists::item_type(self.ty(*v)),
                        *count,
                    )),
                )
            }
            // Unpacking a 1-d array: its elements, the length checked.
            Expr::ExhaustIter { value: v, count } if self.ty(*v).is_array() => {
                let t = self.ty(*v);
                let a = self.load(*v)?.into_struct_value();
                let tup = crate::impls::array_ops::unpack(self, t, a, *count)?;
                let dtype = numba_typeinfer::numpy::array_parts(t)
                    .map(|p| p.0)
                    .unwrap_or(NONE);
                (tup, intern(Type::UniTuple(dtype, *count)))
            }
            Expr::Var(v) | Expr::Cast { value: v } | Expr::ExhaustIter { value: v, .. } => {
                (self.load(*v)?, self.ty(*v))
            }
            Expr::BinOp { lhs, rhs, .. } | Expr::InplaceBinOp { lhs, rhs, .. } => {
                let sig = self.sig(id)?;
                let vals = self.operands(&[*lhs, *rhs], &sig)?;
                // `s = s + piece`: the helper takes over the reference `s`'s slot owns
                // (only an owning slot: one assigned more than once, not borrowed), so
                // the store back into `s` releases nothing.
                let owned = !self.borrowed[lhs.0 as usize] && self.reassigned[lhs.0 as usize];
                if self.appends.contains(&id)
                    && owned
                    && lowered(self.ty(*lhs)) == UNICODE
                    && lowered(sig.args[0]) == UNICODE
                    && lowered(sig.args[1]) == UNICODE
                {
                    let v = crate::impls::unicode::append(self, &vals)?;
                    let zero = v.get_type().const_zero();
                    self.b
                        .build_store(self.slots[lhs.0 as usize], zero)
                        .map_err(llvm_err)?;
                    return Ok((v, UNICODE));
                }
                if let Expr::BinOp { op, .. } = e {
                    let base = (vals[0], lowered(sig.args[0]));
                    if let Some((v, t)) = crate::impls::static_pow_for(self, id, *op, base)? {
                        return Ok((self.cast(v, t, lowered(sig.ret))?, lowered(sig.ret)));
                    }
                }
                (self.call_impl(&sig, &vals)?, lowered(sig.ret))
            }
            Expr::Unary { value, .. } | Expr::GetIter { value } | Expr::IterNext { value } => {
                let sig = self.sig(id)?;
                let vals = self.operands(&[*value], &sig)?;
                (self.call_impl(&sig, &vals)?, lowered(sig.ret))
            }
            Expr::GetItem { value, index } => {
                let sig = self.sig(id)?;
                let vals = self.operands(&[*value, *index], &sig)?;
                (self.call_impl(&sig, &vals)?, lowered(sig.ret))
            }
            // A constant index that typing resolved as an ordinary getitem (an array
            // item, an extension's `operator.getitem`): lowered through the variable that
            // held the index.
            Expr::StaticGetItem {
                value,
                index_var: Some(index),
                ..
            } if self.sig(id).is_ok_and(|s| {
                s.key == ImplKey::GetItem || matches!(s.key, ImplKey::Dispatcher { .. })
            }) =>
            {
                let sig = self.sig(id)?;
                let vals = self.operands(&[*value, *index], &sig)?;
                (self.call_impl(&sig, &vals)?, lowered(sig.ret))
            }
            Expr::StaticGetItem { value, .. } => {
                let sig = self.sig(id)?;
                let recv = self.load(*value)?;
                let recv = self.cast(recv, self.ty(*value), lowered(sig.args[0]))?;
                (
                    self.call_impl(&sig, &[recv, self.ghost()])?,
                    lowered(sig.ret),
                )
            }
            Expr::GetAttr { value, attr } => self.getattr(id, *value, attr)?,
            Expr::Call {
                func, args, kws, ..
            } => {
                let sig = self.sig(id)?;
                // Arguments bound by type inference (keywords, defaults) come in parameter
                // order.
                if let Some(bound) = self.typing.call_args.get(&id) {
                    let mut vals = Vec::with_capacity(bound.len() + 1);
                    let mut params = sig.args.iter();
                    // A bound method's receiver precedes its bound arguments.
                    if let Type::BoundFunction { this, .. } = self.ty(*func).get() {
                        if let Some(&to) = params.next() {
                            let recv = self.load(*func)?;
                            vals.push(self.cast(recv, lowered(this), lowered(to))?);
                        }
                    }
                    for (b, &to) in bound.iter().zip(params) {
                        let (v, from) = match b {
                            numba_typeinfer::BoundArg::Var(v) => (self.load(*v)?, self.ty(*v)),
                            numba_typeinfer::BoundArg::Const(c) => self.constant(c)?,
                            // `*args`: a tuple of the (borrowed) arguments.
                            numba_typeinfer::BoundArg::Pack(vars) => {
                                let mut items = Vec::with_capacity(vars.len());
                                let mut tys = Vec::with_capacity(vars.len());
                                for v in vars {
                                    items.push(self.load(*v)?);
                                    tys.push(self.ty(*v));
                                }
                                let t = tuple_of(&tys);
                                (self.make_struct(t, &items)?, t)
                            }
                        };
                        vals.push(self.cast(v, from, lowered(to))?);
                    }
                    return Ok((self.call_impl(&sig, &vals)?, lowered(sig.ret)));
                }
                if !kws.is_empty() {
                    return Err(self.unsupported(
                        "calls with keyword arguments are not lowered by numba-rs yet",
                    ));
                }
                // An exception's constructor arguments are read where it is raised.
                if matches!(sig.key, ImplKey::Exception(_)) {
                    return Ok((self.ghost(), lowered(sig.ret)));
                }
                // `print` takes its arguments as they are: literal strings keep their value.
                if matches!(&sig.key, ImplKey::Function(k) if k == "print") {
                    let mut psig = sig.clone();
                    psig.args = args.iter().map(|&a| self.ty(a)).collect();
                    let vals = args.iter().map(|&a| self.load(a)).collect::<R<Vec<_>>>()?;
                    return Ok((self.call_impl(&psig, &vals)?, lowered(sig.ret)));
                }
                let ft = self.ty(*func);
                let mut vars = Vec::with_capacity(args.len() + 1);
                // A bound method receives its receiver first: the bound function's value;
                // a C function its address.
                if matches!(
                    ft.get(),
                    Type::BoundFunction { .. } | Type::ExternalFunctionPointer { .. }
                ) {
                    vars.push(*func);
                }
                vars.extend_from_slice(args);
                let mut vals = Vec::with_capacity(vars.len());
                for (i, (&v, &to)) in vars.iter().zip(&sig.args).enumerate() {
                    let x = self.load(v)?;
                    let from = if i == 0 && vars.len() > args.len() {
                        match ft.get() {
                            Type::BoundFunction { this, .. } => lowered(this),
                            _ => ft,
                        }
                    } else {
                        self.ty(v)
                    };
                    vals.push(self.cast(x, from, lowered(to))?);
                }
                (self.call_impl(&sig, &vals)?, lowered(sig.ret))
            }
            Expr::PairFirst { value } | Expr::PairSecond { value } => {
                let idx = u32::from(matches!(e, Expr::PairSecond { .. }));
                let t = self.ty(*value);
                let m = members(t);
                let p = self.load(*value)?.into_struct_value();
                (
                    self.b.build_extract_value(p, idx, "").map_err(llvm_err)?,
                    lowered(m[idx as usize]),
                )
            }
            Expr::BuildTuple { items } => {
                let tys: Vec<TypeId> = items.iter().map(|v| self.ty(*v)).collect();
                let t = tuple_of(&tys);
                let vals = items.iter().map(|v| self.load(*v)).collect::<R<Vec<_>>>()?;
                (self.make_struct(t, &vals)?, t)
            }
            other => {
                return Err(self.unsupported(format!(
                    "{} cannot be lowered by numba-rs yet",
                    self.ir.expr_to_string(other)
                )))
            }
        })
    }

    /// A struct value of type `t` (tuple-like) from member values already of the members'
    /// types.
    pub fn make_struct(&self, t: TypeId, vals: &[BasicValueEnum<'ctx>]) -> R<BasicValueEnum<'ctx>> {
        let st = value_type(self.ctx, t)?.into_struct_type();
        let mut agg = st.get_undef();
        for (i, v) in vals.iter().enumerate() {
            agg = self
                .b
                .build_insert_value(agg, *v, i as u32, "")
                .map_err(llvm_err)?
                .into_struct_value();
        }
        Ok(agg.into())
    }

    fn getattr(
        &mut self,
        id: ExprId,
        value: VarId,
        attr: &str,
    ) -> R<(BasicValueEnum<'ctx>, TypeId)> {
        let sig = self.sig(id)?;
        let ret = lowered(sig.ret);
        let recv_t = self.ty(value);
        // A bound method's value is its receiver (a literal string's made a value).
        if let Type::BoundFunction { this, .. } = ret.get() {
            let v = self.load(value)?;
            let v = if lowered(recv_t) != lowered(this) {
                self.cast(v, recv_t, this)?
            } else {
                v
            };
            return Ok((v, ret));
        }
        // A namedtuple field.
        if let Some((_, names)) = namedtuple_fields(recv_t) {
            if let Some(i) = names.iter().position(|n| n == attr) {
                let sv = self.load(value)?.into_struct_value();
                let v = self
                    .b
                    .build_extract_value(sv, i as u32, attr)
                    .map_err(llvm_err)?;
                return Ok((v, ret));
            }
        }
        // A jitclass instance's field (borrowed, as a struct member); an optional
        // instance is read through its value.
        if let Some(inst) = numba_typeinfer::jitclass::instance_of(lowered(recv_t)) {
            if numba_typeinfer::jitclass::field(inst, attr).is_some() {
                let v = self.load(value)?;
                let v = self.cast(v, lowered(recv_t), inst)?;
                return Ok((self.instance_getattr(inst, v, attr)?, ret));
            }
        }
        // A record's field; a view of one field of an array of records.
        if let Some(f) = numba_typeinfer::records::field(recv_t, attr) {
            let rec = self.load(value)?.into_pointer_value();
            return Ok((crate::impls::records::read_field(self, rec, &f)?, ret));
        }
        if let Type::Array { dtype, .. } = recv_t.get() {
            if numba_typeinfer::records::is_record(dtype)
                && numba_typeinfer::numpy::array_attr(recv_t, attr).is_none()
            {
                let arr = self.load(value)?.into_struct_value();
                return Ok((
                    crate::impls::records::array_field(self, recv_t, arr, attr)?,
                    ret,
                ));
            }
        }
        // An enum class's member: its value.
        if let Type::EnumClass { members, .. } = recv_t.get() {
            if let Some((_, v)) = members.iter().find(|(m, _)| m == attr) {
                return Ok((self.ctx.i64_type().const_int(*v as u64, true).into(), ret));
            }
        }
        // Functions, classes and submodules of modules carry no data.
        if crate::model::is_ghost(ret) {
            return Ok((self.ghost(), ret));
        }
        // An attribute typed as a constant (`a.dtype.itemsize`) is that constant.
        match sig.ret.get() {
            Type::IntegerLiteral(v) => {
                return Ok((self.ctx.i64_type().const_int(v as u64, true).into(), ret))
            }
            Type::BooleanLiteral(b) => {
                return Ok((
                    self.ctx.bool_type().const_int(u64::from(b), false).into(),
                    ret,
                ))
            }
            _ => {}
        }
        let recv = self.load(value)?;
        Ok((self.call_impl(&sig, &[recv])?, ret))
    }

    /// A constant's value and type.
    pub fn constant(&self, c: &Constant) -> R<(BasicValueEnum<'ctx>, TypeId)> {
        Ok(match c {
            Constant::Int(i) => (self.ctx.i64_type().const_int(*i as u64, true).into(), INT64),
            Constant::BigInt { .. } if c.as_u64().is_some() => (
                self.ctx
                    .i64_type()
                    .const_int(c.as_u64().unwrap_or_default(), false)
                    .into(),
                UINT64,
            ),
            Constant::Bool(b) => (
                self.ctx.bool_type().const_int(u64::from(*b), false).into(),
                BOOLEAN,
            ),
            Constant::Float(f) => (self.ctx.f64_type().const_float(*f).into(), FLOAT64),
            Constant::Complex(re, im) => {
                let f = self.ctx.f64_type();
                let v = self.ctx.const_struct(
                    &[f.const_float(*re).into(), f.const_float(*im).into()],
                    false,
                );
                (v.into(), COMPLEX128)
            }
            Constant::None => (self.ghost(), NONE),
            Constant::Ellipsis => (self.ghost(), intern(Type::Ellipsis)),
            Constant::Str(s) => (self.ghost(), intern(Type::StringLiteral(s.clone()))),
            Constant::Bytes(b) => (self.bytes_constant(b)?, BYTES),
            Constant::Tuple(items) => {
                let mut vals = Vec::new();
                let mut tys = Vec::new();
                for it in items {
                    let (v, t) = self.constant(it)?;
                    vals.push(v);
                    tys.push(t);
                }
                let t = tuple_of(&tys);
                (self.make_struct(t, &vals)?, t)
            }
            other => {
                return Err(self.unsupported(format!(
                    "constant {} cannot be lowered by numba-rs yet",
                    other.py_repr()
                )))
            }
        })
    }
}

/// Bound methods that may borrow their receiver's reference: `$m = getattr(r, name)`
/// assigned once, whose only use is the call right after it in the same block
/// (`$x = call $m(...)`, then `del $m`), with `r` neither deleted nor reassigned in
/// between. The receiver's own reference keeps it alive for the call, so the method
/// needs none: the incref/decref pair the lowering would emit around a call that may
/// raise (`l.append(x)` growing the list) is one reference-count pruning cannot remove.
fn borrowed_methods(ir: &numba_ir::FunctionIR, typemap: &[TypeId], assigned: &[u32]) -> Vec<bool> {
    let mut out = vec![false; ir.vars.len()];
    for block in ir.blocks.values() {
        let body = &block.body;
        for (k, inst) in body.iter().enumerate() {
            let Stmt::Assign { target: m, value } = &inst.stmt else {
                continue;
            };
            let Expr::GetAttr { value: recv, .. } = ir.expr(*value) else {
                continue;
            };
            let mi = m.0 as usize;
            // (Not a receiver converted to `this`, as a character-array item to the
            // string it holds: the conversion's string is the method's own.)
            if assigned[mi] != 1
                || !matches!(lowered(typemap[mi]).get(), Type::BoundFunction { this, .. }
                    if matches!(this.get(), Type::List { .. } | Type::Array { .. } | Type::Unicode | Type::Bytes)
                        && crate::model::charseq::units(typemap[recv.0 as usize]).is_none())
            {
                continue;
            }
            // The rest of the block up to `del $m`: one call of `$m`, nothing else using
            // it, the receiver untouched.
            let mut calls = 0;
            let mut ok = false;
            for later in &body[k + 1..] {
                match &later.stmt {
                    Stmt::Del { var } if var == m => {
                        ok = calls == 1;
                        break;
                    }
                    Stmt::Del { var } if var == recv => break,
                    Stmt::Assign { target, .. } if target == recv => break,
                    Stmt::Assign { value, .. } => {
                        let e = ir.expr(*value);
                        let uses_m = ir.expr_uses(e).contains(m);
                        match e {
                            Expr::Call {
                                func,
                                args,
                                kws,
                                vararg,
                                varkwarg,
                                ..
                            } if func == m
                                && !args.contains(m)
                                && kws.iter().all(|(_, v)| v != m)
                                && vararg.is_none()
                                && varkwarg.is_none() =>
                            {
                                calls += 1
                            }
                            _ if uses_m => break,
                            _ => {}
                        }
                    }
                    other if ir.stmt_vars(other).contains(m) => break,
                    _ => {}
                }
            }
            out[mi] = ok;
        }
    }
    out
}

/// The additions `s = s + x` (or `s += x`) whose result the statements right after
/// copy back into `s` (`dels` aside; SSA's `$t = s.2 + x; s.1 = $t; s.2 = s.1`):
/// `s = s + piece` in a loop. A string addition
/// among them appends into room left in `s`'s block, as CPython resizes a string it
/// holds the only reference to; here other holders of the old `s` keep seeing their
/// own shorter string, so no reference count needs to be exact.
fn appends_in_place(ir: &FunctionIR) -> std::collections::HashSet<ExprId> {
    let mut out = std::collections::HashSet::new();
    for block in ir.blocks.values() {
        for (i, inst) in block.body.iter().enumerate() {
            let Stmt::Assign { target, value } = &inst.stmt else {
                continue;
            };
            let lhs = match ir.expr(*value) {
                Expr::BinOp {
                    op: numba_ir::BinOp::Add,
                    lhs,
                    ..
                }
                | Expr::InplaceBinOp {
                    op: numba_ir::BinOp::Add,
                    lhs,
                    ..
                } => *lhs,
                _ => continue,
            };
            // Follow the copies the result goes through (SSA's `s.1 = $t; s.2 = s.1`)
            // to `s` itself.
            let mut cur = *target;
            for next in &block.body[i + 1..] {
                if cur == lhs {
                    break;
                }
                match &next.stmt {
                    Stmt::Del { .. } => {}
                    Stmt::Assign {
                        target: t2,
                        value: v2,
                    } if matches!(ir.expr(*v2), Expr::Var(src) if *src == cur) => {
                        cur = *t2;
                    }
                    _ => break,
                }
            }
            if cur == lhs {
                out.insert(*value);
            }
        }
    }
    out
}
