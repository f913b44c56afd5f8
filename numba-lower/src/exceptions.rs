//! Raising exceptions: static records for constant arguments, run-time records (allocated
//! with `NRT_Allocate`) for arguments only known at run time. Either way the function
//! stores the record through `excinfo` and returns [`STATUS_USER_EXC`](crate::STATUS_USER_EXC);
//! that store is marked `!numba_exception_output` (as Numba marks it) so that
//! reference-count pruning can tell a raising exit from a normal one.

use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, GlobalValue, IntValue, PointerValue};
use inkwell::AddressSpace;
use numba_bytecode::Constant;
use numba_ir::{Expr, GlobalKind, Label, RaiseArg, Stmt, VarId};
use numba_typeinfer::types::*;

use crate::callconv::{boundary_shape, excinfo_type};
use crate::function::FnLower;
use crate::model::{lowered, model_of, SlotCodec};
use crate::{llvm_err, LowerError, R, STATUS_USER_EXC};

/// Bytes of the `ExcInfo` header in front of a run-time record's slots.
const HEADER: u64 = 64;

/// One exception constructor argument.
enum ExcArg<'ctx> {
    /// Known at compile time: a literal type carrying the value.
    Literal(TypeId),
    /// A run-time value of this type.
    Value(BasicValueEnum<'ctx>, TypeId),
}

/// The type that carries a constant's value, for constants that can be exception args.
fn literal_of(c: &Constant) -> Option<TypeId> {
    Some(match c {
        Constant::Str(s) => intern(Type::StringLiteral(s.clone())),
        Constant::Int(i) => intern(Type::IntegerLiteral(*i)),
        Constant::Bool(b) => intern(Type::BooleanLiteral(*b)),
        _ => return None,
    })
}

/// `<class 'ValueError'>` (how the IR prints a class) → `ValueError`.
fn class_key(repr: &str) -> &str {
    repr.strip_prefix("<class '")
        .and_then(|c| c.strip_suffix("'>"))
        .unwrap_or(repr)
}

impl<'ctx> FnLower<'ctx, '_> {
    fn cstr(&mut self, s: &str) -> R<PointerValue<'ctx>> {
        self.counter += 1;
        let g = self
            .b
            .build_global_string_ptr(s, &format!(".exc.str.{}", self.counter))
            .map_err(llvm_err)?;
        Ok(g.as_pointer_value())
    }

    fn const_global(
        &mut self,
        v: inkwell::values::BasicValueEnum<'ctx>,
        name: &str,
    ) -> GlobalValue<'ctx> {
        self.counter += 1;
        let g =
            self.module
                .add_global(v.get_type(), None, &format!(".exc.{name}.{}", self.counter));
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        g.set_initializer(&v);
        g
    }

    /// Free the exception being handled, if any (before leaving the function).
    pub(crate) fn release_caught(&mut self) -> R<()> {
        let Some(caught) = self.caught else {
            return Ok(());
        };
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let rec = self.b.build_load(ptr, caught, "caught").map_err(llvm_err)?;
        let free = self.runtime_fn(
            "numba_rs_exc_free",
            self.ctx.void_type().fn_type(&[ptr.into()], false),
        );
        self.b
            .build_call(free, &[rec.into()], "")
            .map_err(llvm_err)?;
        self.b
            .build_store(caught, ptr.const_null())
            .map_err(llvm_err)?;
        Ok(())
    }

    /// Store `record` through `excinfo`. Inside a `try` (when `in_try` and the function has
    /// try blocks) the exception becomes pending and the builder continues in a fresh
    /// block, where the IR's next `exception_check` sends it to the handler; otherwise the
    /// function returns `STATUS_USER_EXC`.
    fn store_and_fail(&mut self, record: PointerValue<'ctx>, in_try: bool) -> R<()> {
        if let (true, Some(depth)) = (in_try, self.try_depth) {
            let i32t = self.ctx.i32_type();
            let d = self
                .b
                .build_load(i32t, depth, "")
                .map_err(llvm_err)?
                .into_int_value();
            let inside = self
                .b
                .build_int_compare(inkwell::IntPredicate::SGT, d, i32t.const_zero(), "")
                .map_err(llvm_err)?;
            let pending = self.new_block("exc.pending");
            let leave = self.new_block("exc.return");
            let after = self.new_block("exc.after");
            self.b
                .build_conditional_branch(inside, pending, leave)
                .map_err(llvm_err)?;
            self.b.position_at_end(pending);
            self.b.build_store(self.excinfo, record).map_err(llvm_err)?;
            self.b.build_unconditional_branch(after).map_err(llvm_err)?;
            self.b.position_at_end(leave);
            self.return_user_exc(record)?;
            self.b.position_at_end(after);
            return Ok(());
        }
        self.return_user_exc(record)
    }

    /// Leave the function with `record` as its exception. The store carries Numba's
    /// `!numba_exception_output !{i1 true}` mark: reference-count pruning knows a raising
    /// exit by it ([`crate::refprune`]).
    pub(crate) fn return_user_exc(&mut self, record: PointerValue<'ctx>) -> R<()> {
        self.release_caught()?;
        // The statement's conversion temporaries (`FnLower::temps`) die with it.
        for (t, v) in self.temps.clone() {
            self.decref(t, v)?;
        }
        let store = self.b.build_store(self.excinfo, record).map_err(llvm_err)?;
        let kind = self.ctx.get_kind_id(crate::refprune::EXCEPTION_OUTPUT_MD);
        let mark = self
            .ctx
            .metadata_node(&[self.ctx.bool_type().const_int(1, false).into()]);
        store.set_metadata(mark, kind).map_err(llvm_err)?;
        self.b
            .build_return(Some(
                &self.ctx.i32_type().const_int(STATUS_USER_EXC as u64, true),
            ))
            .map_err(llvm_err)?;
        Ok(())
    }

    /// Raise `class(*args)` (see [`Self::store_and_fail`] for `in_try`).
    fn raise_with(&mut self, class: &str, args: Vec<ExcArg<'ctx>>, in_try: bool) -> R<()> {
        let ctx = self.ctx;
        let i64t = ctx.i64_type();
        let ptr_t = ctx.ptr_type(AddressSpace::default());
        let types: Vec<TypeId> = args
            .iter()
            .map(|a| match a {
                ExcArg::Literal(t) | ExcArg::Value(_, t) => *t,
            })
            .collect();
        let mut nslots = 0u64;
        for a in &args {
            if let ExcArg::Value(_, t) = a {
                nslots += boundary_shape(*t)?.slots() as u64;
            }
        }
        let class_p = self.cstr(class)?;
        let func_p = self.cstr(&self.ir.qualname.clone())?;
        let types_g = crate::cache::typecode_table(self.module, &types);
        let st = excinfo_type(ctx);
        let dynamic = nslots > 0;
        let header = |slots: PointerValue<'ctx>, dynamic: bool| {
            [
                class_p.into(),
                i64t.const_int(types.len() as u64, false).into(),
                types_g.as_pointer_value().into(),
                slots.into(),
                i64t.const_int(nslots, false).into(),
                i64t.const_int(u64::from(dynamic), false).into(),
                func_p.into(),
                i64t.const_int(u64::from(self.line), false).into(),
            ]
        };
        if !dynamic {
            let rec = st.const_named_struct(&header(ptr_t.const_null(), false));
            let g = self.const_global(rec.into(), "info");
            return self.store_and_fail(g.as_pointer_value(), in_try);
        }
        // A run-time record: header and slots in one NRT block, freed by the reader.
        let alloc = match self.module.get_function("NRT_Allocate") {
            Some(f) => f,
            None => self.module.add_function(
                "NRT_Allocate",
                ptr_t.fn_type(&[i64t.into()], false),
                Some(Linkage::External),
            ),
        };
        let size = i64t.const_int(HEADER + 8 * nslots, false);
        let block = self
            .b
            .build_call(alloc, &[size.into()], "excinfo")
            .map_err(llvm_err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("NRT_Allocate returned void".into()))?
            .into_pointer_value();
        // SAFETY (of the generated code): the block holds HEADER + 8 * nslots bytes.
        let slots = unsafe {
            self.b
                .build_gep(
                    ctx.i8_type(),
                    block,
                    &[i64t.const_int(HEADER, false)],
                    "slots",
                )
                .map_err(llvm_err)?
        };
        let fields = header(slots, true);
        for (i, f) in fields.iter().enumerate() {
            let p = self
                .b
                .build_struct_gep(st, block, i as u32, "")
                .map_err(llvm_err)?;
            self.b.build_store(p, *f).map_err(llvm_err)?;
        }
        let codec = SlotCodec {
            ctx,
            b: &self.b,
            slots,
        };
        let mut idx = 0u32;
        for a in &args {
            if let ExcArg::Value(v, t) = a {
                model_of(*t)?.pack(&codec, *t, *v, &mut idx)?;
            }
        }
        // The record holds a reference to each array or string it carries: the reader
        // hands it to the Python object it makes, or `numba_rs_exc_free` drops it.
        for a in &args {
            if let ExcArg::Value(v, t) = a {
                self.incref(*t, *v)?;
            }
        }
        self.store_and_fail(block, in_try)
    }

    /// Raise `class(*messages)` with constant string arguments.
    pub fn raise_const(&mut self, class: &str, args: &[&str]) -> R<()> {
        let args = args
            .iter()
            .map(|s| ExcArg::Literal(intern(Type::StringLiteral((*s).to_string()))))
            .collect();
        self.raise_with(class, args, true)
    }

    /// If `cond` holds, run `raise` (which raises); continue in a fresh block otherwise.
    /// Inside a `try` a raise continues with the exception pending: that path joins the
    /// fresh block too.
    fn raise_if(&mut self, cond: IntValue<'ctx>, raise: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        let raise_bb = self.new_block("raise");
        let cont = self.new_block("cont");
        self.b
            .build_conditional_branch(cond, raise_bb, cont)
            .map_err(llvm_err)?;
        self.b.position_at_end(raise_bb);
        raise(self)?;
        if self
            .b
            .get_insert_block()
            .is_some_and(|bb| bb.get_terminator().is_none())
        {
            self.b.build_unconditional_branch(cont).map_err(llvm_err)?;
        }
        self.b.position_at_end(cont);
        Ok(())
    }

    /// If `cond` holds, raise `class(*messages)`; continue in a fresh block otherwise.
    pub fn raise_const_if(&mut self, cond: IntValue<'ctx>, class: &str, args: &[&str]) -> R<()> {
        self.raise_if(cond, |lw| lw.raise_const(class, args))
    }

    /// If `cond` holds, raise `class(v)` with `v` a run-time value of type `t` (borrowed:
    /// the record takes its own reference), as `KeyError(key)`.
    pub fn raise_value_if(
        &mut self,
        cond: IntValue<'ctx>,
        class: &str,
        v: BasicValueEnum<'ctx>,
        t: TypeId,
    ) -> R<()> {
        self.raise_if(cond, |lw| {
            lw.raise_with(class, vec![ExcArg::Value(v, t)], true)
        })
    }

    /// If `cond` holds, raise `class(*values)`, each a run-time value of its type
    /// (borrowed), as `AxisError(axis, ndim)` (which formats its own message).
    pub fn raise_values_if(
        &mut self,
        cond: IntValue<'ctx>,
        class: &str,
        values: &[(BasicValueEnum<'ctx>, TypeId)],
    ) -> R<()> {
        let args = values.iter().map(|&(v, t)| ExcArg::Value(v, t)).collect();
        self.raise_if(cond, |lw| lw.raise_with(class, args, true))
    }

    /// If `cond` holds, raise `class(message)` with a run-time message string that
    /// `make` produces in the raising block (a new reference, which the exception record
    /// takes over).
    pub fn raise_message_if(
        &mut self,
        cond: IntValue<'ctx>,
        class: &str,
        make: impl FnOnce(&mut Self) -> R<BasicValueEnum<'ctx>>,
    ) -> R<()> {
        let raise_bb = self.new_block("raise");
        let cont = self.new_block("cont");
        self.b
            .build_conditional_branch(cond, raise_bb, cont)
            .map_err(llvm_err)?;
        self.b.position_at_end(raise_bb);
        let msg = make(self)?;
        // The record takes a reference of its own; this one is released with the
        // statement's temporaries as the function returns.
        self.temps.push((UNICODE, msg));
        let raised = self.raise_with(class, vec![ExcArg::Value(msg, UNICODE)], true);
        self.temps.pop();
        raised?;
        // Inside a `try` the raise continues here with the exception pending.
        if self
            .b
            .get_insert_block()
            .is_some_and(|bb| bb.get_terminator().is_none())
        {
            self.decref(UNICODE, msg)?;
            self.b.build_unconditional_branch(cont).map_err(llvm_err)?;
        }
        self.b.position_at_end(cont);
        Ok(())
    }

    /// The handler of the `try` region block `label` ends: the handler target of the
    /// nearest `exception_check` branch before it on the normal path (searching back
    /// through predecessors, not past the block that opened the region). A block
    /// reached only as a handler (its predecessors branch to it on an exception) is in
    /// no region of its own: `None`.
    fn region_handler(&self, label: Label) -> Option<Label> {
        let intrinsic = |v: VarId, name: &str| {
            matches!(self.definition(v), Some(Expr::Call { func, .. })
                if matches!(self.definition(*func), Some(Expr::Global { value, .. })
                    if value.kind == GlobalKind::Intrinsic(name.into())))
        };
        let opens_region = |l: Label| {
            self.ir.blocks[&l].body.iter().any(|i| {
                matches!(&i.stmt, Stmt::Assign { target, .. } if intrinsic(*target, "mark_try_block"))
            })
        };
        let mut preds: std::collections::HashMap<Label, Vec<Label>> = Default::default();
        for (&l, b) in &self.ir.blocks {
            for s in b.terminator().map(Stmt::successors).unwrap_or_default() {
                preds.entry(s).or_default().push(l);
            }
        }
        // A block raising inside a `try` jumps to the handler: an exception edge too.
        let raises = |l: Label| {
            self.ir.blocks[&l].body.iter().any(|i| {
                matches!(
                    i.stmt,
                    Stmt::TryRaise { .. }
                        | Stmt::StaticTryRaise { .. }
                        | Stmt::DynamicTryRaise { .. }
                )
            })
        };
        let mut seen = std::collections::HashSet::from([label]);
        let mut work = std::collections::VecDeque::from([label]);
        while let Some(l) = work.pop_front() {
            for &p in preds.get(&l).into_iter().flatten() {
                if raises(p) {
                    continue;
                }
                if let Some(Stmt::Branch { cond, truebr, .. }) = self.ir.blocks[&p].terminator() {
                    if intrinsic(*cond, "exception_check") {
                        if *truebr == l {
                            // An exception edge into `l`: not the normal path.
                            continue;
                        }
                        // Never the raising block's own handler entry (a loop).
                        return (*truebr != label).then_some(*truebr);
                    }
                }
                if seen.insert(p) && !opens_region(p) {
                    work.push_back(p);
                }
            }
        }
        None
    }

    /// `StaticRaise`: a class (as the IR prints it) and constant arguments.
    pub(crate) fn static_raise(
        &mut self,
        exc_class: Option<&str>,
        args: Option<&[Constant]>,
        in_try: bool,
    ) -> R<()> {
        let Some(class) = exc_class else {
            // A bare `raise`: the exception being handled again.
            return self.raise_var(None, in_try);
        };
        // What the interpreter emits for CPython's RERAISE after an unmatched `except`:
        // raise the exception being handled again.
        let reraise = args.unwrap_or_default().first().is_some_and(|c| {
            matches!(c, Constant::Str(m)
                if m.starts_with("Unreachable condition reached (op code RERAISE executed)"))
        });
        if let (true, Some(caught)) = (reraise, self.caught) {
            let ptr = self.ctx.ptr_type(AddressSpace::default());
            let rec = self
                .b
                .build_load(ptr, caught, "reraise")
                .map_err(llvm_err)?
                .into_pointer_value();
            self.b
                .build_store(caught, ptr.const_null())
                .map_err(llvm_err)?;
            // CPython's RERAISE is covered by the handler's own cleanup entry, which
            // pops the exception state and re-raises into any enclosing `try`; Numba's IR
            // ends the handler's region just before this raise, so the exception goes
            // to the region's handler (the cleanup) here, pending, as a raise inside the
            // region would.
            if let Some(cleanup) = self.region_handler(self.label) {
                self.b.build_store(self.excinfo, rec).map_err(llvm_err)?;
                let target = self.block(cleanup)?;
                self.b
                    .build_unconditional_branch(target)
                    .map_err(llvm_err)?;
                return Ok(());
            }
            return self.return_user_exc(rec);
        }
        let mut out = Vec::new();
        for c in args.unwrap_or_default() {
            out.push(self.const_arg(c)?);
        }
        self.raise_with(class_key(class), out, in_try)
    }

    fn const_arg(&mut self, c: &Constant) -> R<ExcArg<'ctx>> {
        Ok(match literal_of(c) {
            Some(t) => ExcArg::Literal(t),
            None => {
                let (v, t) = self.constant(c)?;
                ExcArg::Value(v, t)
            }
        })
    }

    /// An exception argument held by a variable: its literal value when typing knows
    /// it, else its run-time value.
    fn var_arg(&mut self, a: VarId) -> R<ExcArg<'ctx>> {
        let raw = self.typing.type_of(a);
        if matches!(
            raw.get(),
            Type::StringLiteral(_) | Type::IntegerLiteral(_) | Type::BooleanLiteral(_)
        ) {
            return Ok(ExcArg::Literal(raw));
        }
        let t = lowered(raw);
        boundary_shape(t).map_err(|_| {
            self.unsupported(format!(
                "an exception argument of type {t} is not supported by numba-rs yet"
            ))
        })?;
        Ok(ExcArg::Value(self.load(a)?, t))
    }

    /// `DynamicRaise`: a class and arguments some of which are only known at run time.
    pub(crate) fn dynamic_raise(
        &mut self,
        exc_class: Option<&str>,
        args: &[RaiseArg],
        in_try: bool,
    ) -> R<()> {
        let Some(class) = exc_class else {
            return self.raise_var(None, in_try);
        };
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            out.push(match a {
                RaiseArg::Const(c) => self.const_arg(c)?,
                RaiseArg::Var(v) => self.var_arg(*v)?,
            });
        }
        self.raise_with(class_key(class), out, in_try)
    }

    /// `raise <var>`: the variable holds an exception class or an instance built by a
    /// constructor call in this function, whose arguments become the exception's args.
    pub(crate) fn raise_var(&mut self, exc: Option<VarId>, in_try: bool) -> R<()> {
        let Some(v) = exc else {
            // A bare `raise` in a handler re-raises the exception being handled.
            if let Some(caught) = self.caught {
                let ptr = self.ctx.ptr_type(AddressSpace::default());
                let rec = self
                    .b
                    .build_load(ptr, caught, "reraise")
                    .map_err(llvm_err)?
                    .into_pointer_value();
                self.b
                    .build_store(caught, ptr.const_null())
                    .map_err(llvm_err)?;
                return self.store_and_fail(rec, in_try);
            }
            return Err(self.unsupported(
                "a bare `raise` outside an `except` handler is not supported by numba-rs",
            ));
        };
        let class = match self.typing.type_of(v).get() {
            Type::ExceptionClass(n) => return self.raise_with(&n, vec![], in_try),
            Type::ExceptionInstance(n) => n,
            other => {
                return Err(self.unsupported(format!(
                    "exceptions must derive from BaseException, got {other}"
                )))
            }
        };
        let Some(Expr::Call { args, .. }) = self.definition(v) else {
            return Err(self.unsupported(
                "raising an exception instance not constructed in the same function is not supported by numba-rs yet",
            ));
        };
        let mut out = Vec::new();
        for &a in args {
            out.push(self.var_arg(a)?);
        }
        self.raise_with(&class, out, in_try)
    }
}
