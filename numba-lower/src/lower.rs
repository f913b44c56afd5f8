//! Lowering of one typed function into an LLVM module.
//!
//! Every variable with runtime data gets a stack slot in the entry block (LLVM's mem2reg turns
//! them into SSA values); each IR block becomes an LLVM block. Values are converted to the
//! type of the variable they are stored into, so unified variables (an int assigned where a
//! float64 was inferred) just work. Operations follow Python semantics where Numba does:
//! floor division and modulo round toward negative infinity, and division by zero raises
//! `ZeroDivisionError` through the status-code convention.

use std::collections::HashMap;

use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FloatValue, FunctionValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};
use numba_bytecode::Constant;
use numba_ir::{BinOp, Expr, ExprId, FunctionIR, GlobalKind, Label, Stmt, UnaryOp, VarId};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature, TypingResult};

use crate::model::{range_iter_storage, value_type};
use crate::{LinkedFunctions, LowerError, LowerOptions, STATUS_OK, STATUS_USER_EXC};

type R<T> = Result<T, LowerError>;

trait OrLlvm<T> {
    fn l(self) -> R<T>;
}

impl<T> OrLlvm<T> for Result<T, BuilderError> {
    fn l(self) -> R<T> {
        self.map_err(|e| LowerError::Llvm(e.to_string()))
    }
}

/// Symbols of a lowered function.
pub(crate) struct Symbols {
    pub native: String,
    pub entry: String,
    /// External native functions to map to addresses before JIT: (symbol, address).
    pub externals: Vec<(String, usize)>,
}

pub(crate) fn native_symbol(ir: &FunctionIR, unique_id: u64) -> String {
    format!("numba_rs.{}.{}", ir.qualname, unique_id)
}

/// The LLVM function type of a native function for these argument types.
fn native_fn_type<'ctx>(ctx: &'ctx Context, args: &[TypeId]) -> inkwell::types::FunctionType<'ctx> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    let mut params: Vec<BasicMetadataTypeEnum> = vec![ptr.into(), ptr.into()];
    for &a in args {
        if let Some(t) = value_type(ctx, a) {
            params.push(t.into());
        }
    }
    ctx.i32_type().fn_type(&params, false)
}

struct FnLower<'ctx, 'a> {
    ctx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    ir: &'a FunctionIR,
    typing: &'a TypingResult,
    func: FunctionValue<'ctx>,
    retptr: PointerValue<'ctx>,
    excinfo: PointerValue<'ctx>,
    slots: Vec<Option<PointerValue<'ctx>>>,
    blocks: HashMap<Label, BasicBlock<'ctx>>,
    entry: BasicBlock<'ctx>,
    line: u32,
    options: &'a LowerOptions,
    linked: &'a dyn LinkedFunctions,
    externals: Vec<(String, usize)>,
    exc_count: usize,
}

/// Types whose values need no runtime representation: they are known at compile time.
fn is_dataless(t: TypeId) -> bool {
    matches!(
        t.get(),
        Type::NoneType
            | Type::Module(_)
            | Type::Function(_)
            | Type::NumberClass(_)
            | Type::Dispatcher { .. }
            | Type::ExceptionClass(_)
            | Type::ExceptionInstance(_)
            | Type::BoundFunction { .. }
            | Type::DType(_)
            | Type::Omitted(_)
    )
}

/// Lower `ir` into `module`, returning the symbols to look up after JIT.
pub(crate) fn lower_module<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    ir: &FunctionIR,
    typing: &TypingResult,
    options: &LowerOptions,
    linked: &dyn LinkedFunctions,
) -> R<Symbols> {
    for (&a, name) in typing.arg_types.iter().zip(&ir.arg_names) {
        if value_type(ctx, a).is_none() && a != NONE {
            return Err(LowerError::Unsupported {
                message: format!("argument '{name}' of type {a} cannot be lowered by numba-rs yet"),
                line: ir.firstlineno,
            });
        }
    }
    let ret = typing.return_type;
    if value_type(ctx, ret).is_none() && ret != NONE {
        return Err(LowerError::Unsupported {
            message: format!("returning a value of type {ret} is not supported by numba-rs yet"),
            line: ir.firstlineno,
        });
    }
    let native = native_symbol(ir, options.unique_id);
    let fnty = native_fn_type(ctx, &typing.arg_types);
    let func = module.add_function(&native, fnty, None);
    let entry = ctx.append_basic_block(func, "entry");
    let b = ctx.create_builder();
    b.position_at_end(entry);
    let retptr = func
        .get_nth_param(0)
        .map(|p| p.into_pointer_value())
        .ok_or_else(|| LowerError::Llvm("missing retptr".into()))?;
    let excinfo = func
        .get_nth_param(1)
        .map(|p| p.into_pointer_value())
        .ok_or_else(|| LowerError::Llvm("missing excinfo".into()))?;
    retptr.set_name("retptr");
    excinfo.set_name("excinfo");
    let mut lw = FnLower {
        ctx,
        module,
        b,
        ir,
        typing,
        func,
        retptr,
        excinfo,
        slots: vec![None; ir.vars.len()],
        blocks: HashMap::new(),
        entry,
        line: ir.firstlineno,
        options,
        linked,
        externals: Vec::new(),
        exc_count: 0,
    };
    lw.lower_body()?;
    let entry_sym = format!("{native}.entry");
    lw.build_entry_wrapper(&entry_sym)?;
    Ok(Symbols {
        native,
        entry: entry_sym,
        externals: lw.externals,
    })
}

impl<'ctx> FnLower<'ctx, '_> {
    fn unsupported(&self, message: String) -> LowerError {
        LowerError::Unsupported {
            message,
            line: self.line,
        }
    }

    /// The type lowering works with: literal types are represented as their underlying type.
    fn ty(&self, v: VarId) -> TypeId {
        self.typing.type_of(v).unliteral()
    }

    fn lower_body(&mut self) -> R<()> {
        // A variable whose type carries data this target cannot represent yet (arrays,
        // optionals, strings...) stops lowering here, naming it and where it is defined.
        for (i, var) in self.ir.vars.iter().enumerate() {
            // A literal's value is known at compile time (a constant message, say).
            let raw = self.typing.typemap[i];
            let t = raw.unliteral();
            if value_type(self.ctx, t).is_none() && !is_dataless(t) && !raw.is_literal() {
                return Err(LowerError::Unsupported {
                    message: format!(
                        "variable '{}' of type {t} cannot be lowered by numba-rs yet",
                        var.name
                    ),
                    line: var.loc.line,
                });
            }
        }
        // Stack slots for every variable with runtime data.
        for (i, var) in self.ir.vars.iter().enumerate() {
            let t = self.typing.typemap[i].unliteral();
            if let Some(lt) = value_type(self.ctx, t) {
                let slot = self.b.build_alloca(lt, &var.name).l()?;
                self.slots[i] = Some(slot);
            }
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
            .ok_or_else(|| self.unsupported("empty function".into()))?;
        self.b.build_unconditional_branch(self.blocks[&first]).l()?;
        for (&label, block) in &self.ir.blocks {
            self.b.position_at_end(self.blocks[&label]);
            for inst in &block.body {
                self.line = inst.loc.line;
                self.lower_stmt(&inst.stmt)?;
            }
            // A block without terminator (never produced by the interpreter) must not fall off.
            if !block.is_terminated() {
                self.b.build_unreachable().l()?;
            }
        }
        Ok(())
    }

    fn lower_stmt(&mut self, stmt: &Stmt) -> R<()> {
        match stmt {
            Stmt::Assign { target, value } => {
                let (v, from) = self.lower_expr(*value)?;
                if let (Some(v), Some(slot)) = (v, self.slots[target.0 as usize]) {
                    let v = self.cast(v, from, self.ty(*target))?;
                    self.b.build_store(slot, v).l()?;
                }
            }
            Stmt::Return { value } => {
                let ret = self.typing.return_type;
                if let Some(v) = self.load(*value)? {
                    let v = self.cast(v, self.ty(*value), ret)?;
                    self.b.build_store(self.retptr, v).l()?;
                }
                self.b
                    .build_return(Some(&self.ctx.i32_type().const_int(STATUS_OK as u64, true)))
                    .l()?;
            }
            Stmt::Jump { target } => {
                self.b
                    .build_unconditional_branch(self.block(*target)?)
                    .l()?;
            }
            Stmt::Branch {
                cond,
                truebr,
                falsebr,
            } => {
                let c = self
                    .load(*cond)?
                    .ok_or_else(|| self.unsupported("branch on a value without data".into()))?;
                let c = self.truth(c, self.ty(*cond))?;
                self.b
                    .build_conditional_branch(c, self.block(*truebr)?, self.block(*falsebr)?)
                    .l()?;
            }
            Stmt::Raise { exception } => {
                let (class, msg) = self.static_exception(*exception)?;
                self.raise(&class, &msg)?;
            }
            Stmt::StaticRaise { exc_class, args } => {
                let class = exc_class
                    .as_deref()
                    .and_then(|c| c.strip_prefix("<class '"))
                    .and_then(|c| c.strip_suffix("'>"))
                    .unwrap_or("Exception")
                    .to_string();
                let msg = args
                    .as_ref()
                    .and_then(|a| a.first())
                    .map(|c| c.py_str())
                    .unwrap_or_default();
                self.raise(&class, &msg)?;
            }
            Stmt::Del { .. } => {}
            Stmt::SetItem { .. }
            | Stmt::SetAttr { .. }
            | Stmt::DelItem { .. }
            | Stmt::DelAttr { .. }
            | Stmt::TryRaise { .. }
            | Stmt::EnterWith { .. }
            | Stmt::PopBlock
            | Stmt::StaticSetItem { .. }
            | Stmt::StoreMap { .. }
            | Stmt::DynamicRaise { .. }
            | Stmt::StaticTryRaise { .. }
            | Stmt::DynamicTryRaise { .. }
            | Stmt::Print { .. }
            | Stmt::Extension { .. } => {
                return Err(self.unsupported(
                    "item and attribute assignment, `del` and raising inside `try` are not supported by numba-rs yet"
                        .into(),
                ))
            }
        }
        Ok(())
    }

    fn block(&self, label: Label) -> R<BasicBlock<'ctx>> {
        self.blocks
            .get(&label)
            .copied()
            .ok_or_else(|| LowerError::Llvm(format!("no block {label}")))
    }

    /// `raise X` / `raise X("const message")`: find the class and constant message.
    fn static_exception(&self, exc: Option<VarId>) -> R<(String, String)> {
        let Some(v) = exc else {
            return Err(self.unsupported("re-raising an exception is not supported".into()));
        };
        let def = self.definition(v);
        let class = match self.ty(v).get() {
            Type::ExceptionClass(n) | Type::ExceptionInstance(n) => n,
            other => return Err(self.unsupported(format!("cannot raise a value of type {other}"))),
        };
        let mut msg = String::new();
        if let Some(Expr::Call { args, .. }) = def {
            let mut parts = Vec::new();
            for a in args {
                match self.definition(*a) {
                    Some(Expr::Const(Constant::Str(s))) => parts.push(s.clone()),
                    Some(Expr::Const(c)) => parts.push(c.py_repr()),
                    _ => {
                        return Err(self.unsupported(
                            "raising an exception with non-constant arguments is not supported by numba-rs yet".into(),
                        ))
                    }
                }
            }
            msg = if parts.len() == 1 {
                parts.remove(0)
            } else if parts.is_empty() {
                String::new()
            } else {
                format!("({})", parts.join(", "))
            };
        }
        Ok((class, msg))
    }

    /// The single expression assigned to `v`, following plain copies.
    fn definition(&self, v: VarId) -> Option<&Expr> {
        let mut cur = v;
        for _ in 0..16 {
            let mut found = None;
            for block in self.ir.blocks.values() {
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
            match self.ir.expr(found?) {
                Expr::Var(src) => cur = *src,
                e => return Some(e),
            }
        }
        None
    }

    /// A stack slot in the entry block, so it is allocated once however often the
    /// current block runs (and mem2reg can promote it).
    fn alloca_in_entry(&self, ty: BasicTypeEnum<'ctx>, name: &str) -> R<PointerValue<'ctx>> {
        let here = self.b.get_insert_block();
        match self.entry.get_first_instruction() {
            Some(i) => self.b.position_before(&i),
            None => self.b.position_at_end(self.entry),
        }
        let slot = self.b.build_alloca(ty, name).l()?;
        if let Some(bb) = here {
            self.b.position_at_end(bb);
        }
        Ok(slot)
    }

    fn load(&self, v: VarId) -> R<Option<BasicValueEnum<'ctx>>> {
        match (self.slots[v.0 as usize], value_type(self.ctx, self.ty(v))) {
            (Some(slot), Some(t)) => Ok(Some(self.b.build_load(t, slot, self.ir.var_name(v)).l()?)),
            _ => Ok(None),
        }
    }

    fn load_req(&self, v: VarId) -> R<BasicValueEnum<'ctx>> {
        self.load(v)?.ok_or_else(|| {
            self.unsupported(format!(
                "variable '{}' of type {} has no runtime value",
                self.ir.var_name(v),
                self.ty(v)
            ))
        })
    }

    /// Python truthiness as an i1.
    fn truth(&self, v: BasicValueEnum<'ctx>, t: TypeId) -> R<IntValue<'ctx>> {
        let c = self.cast(v, t, BOOLEAN)?;
        Ok(c.into_int_value())
    }

    /// Convert a value between scalar types (Numba's `context.cast`).
    fn cast(&self, v: BasicValueEnum<'ctx>, from: TypeId, to: TypeId) -> R<BasicValueEnum<'ctx>> {
        if from == to {
            return Ok(v);
        }
        let b = &self.b;
        let target = value_type(self.ctx, to);
        Ok(match (from.get(), to.get(), target) {
            (Type::Boolean, Type::Integer { .. }, Some(BasicTypeEnum::IntType(it))) => {
                b.build_int_z_extend(v.into_int_value(), it, "").l()?.into()
            }
            (Type::Boolean, Type::Float { .. }, Some(BasicTypeEnum::FloatType(ft))) => b
                .build_unsigned_int_to_float(v.into_int_value(), ft, "")
                .l()?
                .into(),
            (Type::Integer { .. }, Type::Boolean, _) => {
                let iv = v.into_int_value();
                b.build_int_compare(IntPredicate::NE, iv, iv.get_type().const_zero(), "")
                    .l()?
                    .into()
            }
            (Type::Float { .. }, Type::Boolean, _) => {
                let fv = v.into_float_value();
                b.build_float_compare(FloatPredicate::UNE, fv, fv.get_type().const_zero(), "")
                    .l()?
                    .into()
            }
            (
                Type::Integer { bits: fb, signed },
                Type::Integer { bits: tb, .. },
                Some(BasicTypeEnum::IntType(it)),
            ) => {
                let iv = v.into_int_value();
                if tb < fb {
                    b.build_int_truncate(iv, it, "").l()?.into()
                } else if tb == fb {
                    iv.into()
                } else if signed {
                    b.build_int_s_extend(iv, it, "").l()?.into()
                } else {
                    b.build_int_z_extend(iv, it, "").l()?.into()
                }
            }
            (
                Type::Integer { signed, .. },
                Type::Float { .. },
                Some(BasicTypeEnum::FloatType(ft)),
            ) => {
                if signed {
                    b.build_signed_int_to_float(v.into_int_value(), ft, "")
                        .l()?
                        .into()
                } else {
                    b.build_unsigned_int_to_float(v.into_int_value(), ft, "")
                        .l()?
                        .into()
                }
            }
            (
                Type::Float { .. },
                Type::Integer { signed, .. },
                Some(BasicTypeEnum::IntType(it)),
            ) => {
                if signed {
                    b.build_float_to_signed_int(v.into_float_value(), it, "")
                        .l()?
                        .into()
                } else {
                    b.build_float_to_unsigned_int(v.into_float_value(), it, "")
                        .l()?
                        .into()
                }
            }
            (Type::Float { .. }, Type::Float { .. }, Some(BasicTypeEnum::FloatType(ft))) => {
                b.build_float_cast(v.into_float_value(), ft, "").l()?.into()
            }
            (
                Type::UniTuple(..) | Type::Tuple(_),
                Type::UniTuple(..) | Type::Tuple(_),
                Some(BasicTypeEnum::StructType(st)),
            ) => {
                let fe = tuple_elems(from);
                let te = tuple_elems(to);
                let sv = v.into_struct_value();
                let mut out = st.get_undef();
                for (i, (&f, &t)) in fe.iter().zip(&te).enumerate() {
                    let e = b.build_extract_value(sv, i as u32, "").l()?;
                    let e = self.cast(e, f, t)?;
                    out = b
                        .build_insert_value(out, e, i as u32, "")
                        .l()?
                        .into_struct_value();
                }
                out.into()
            }
            _ => return Err(self.unsupported(format!("cannot convert {from} to {to}"))),
        })
    }

    /// Emit a raise of a constant exception: store the static ExcInfo and return status 1.
    fn raise(&mut self, class: &str, msg: &str) -> R<()> {
        self.exc_count += 1;
        let n = self.exc_count;
        let cls = self
            .b
            .build_global_string_ptr(class, &format!(".exc.class.{n}"))
            .l()?;
        let m = self
            .b
            .build_global_string_ptr(msg, &format!(".exc.msg.{n}"))
            .l()?;
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let st = self.ctx.struct_type(&[ptr.into(), ptr.into()], false);
        let g = self.module.add_global(st, None, &format!(".exc.info.{n}"));
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        g.set_initializer(
            &st.const_named_struct(&[cls.as_pointer_value().into(), m.as_pointer_value().into()]),
        );
        self.b.build_store(self.excinfo, g.as_pointer_value()).l()?;
        self.b
            .build_return(Some(
                &self.ctx.i32_type().const_int(STATUS_USER_EXC as u64, true),
            ))
            .l()?;
        Ok(())
    }

    /// If `cond` holds, raise; continue in a fresh block otherwise.
    fn raise_if(&mut self, cond: IntValue<'ctx>, class: &str, msg: &str) -> R<()> {
        let raise_bb = self.ctx.append_basic_block(self.func, "raise");
        let cont = self.ctx.append_basic_block(self.func, "cont");
        self.b.build_conditional_branch(cond, raise_bb, cont).l()?;
        self.b.position_at_end(raise_bb);
        self.raise(class, msg)?;
        self.b.position_at_end(cont);
        Ok(())
    }

    fn intrinsic(&self, name: &str, tys: &[BasicTypeEnum<'ctx>]) -> R<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, tys))
            .ok_or_else(|| LowerError::Llvm(format!("intrinsic {name} not found")))
    }

    /// A libm function `double name(double, ...)`.
    fn libm(&self, name: &str, nargs: usize) -> FunctionValue<'ctx> {
        if let Some(f) = self.module.get_function(name) {
            return f;
        }
        let f64t = self.ctx.f64_type();
        let params: Vec<BasicMetadataTypeEnum> = vec![f64t.into(); nargs];
        self.module
            .add_function(name, f64t.fn_type(&params, false), Some(Linkage::External))
    }

    fn call_float(&self, f: FunctionValue<'ctx>, args: &[FloatValue<'ctx>]) -> R<FloatValue<'ctx>> {
        let a: Vec<BasicMetadataValueEnum> = args.iter().map(|&x| x.into()).collect();
        let r = self.b.build_call(f, &a, "").l()?;
        r.try_as_basic_value()
            .basic()
            .map(|v| v.into_float_value())
            .ok_or_else(|| LowerError::Llvm("call returned void".into()))
    }

    fn float_unary(&self, name: &str, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let intrinsics = [
            "sqrt",
            "exp",
            "log",
            "sin",
            "cos",
            "floor",
            "ceil",
            "trunc",
            "fabs",
            "log10",
            "log2",
            "roundeven",
        ];
        let f = if intrinsics.contains(&name) {
            self.intrinsic(&format!("llvm.{name}"), &[x.get_type().into()])?
        } else {
            self.libm(name, 1)
        };
        self.call_float(f, &[x])
    }

    fn lower_expr(&mut self, id: ExprId) -> R<(Option<BasicValueEnum<'ctx>>, TypeId)> {
        let ir = self.ir;
        let e = ir.expr(id);
        let i64t = self.ctx.i64_type();
        Ok(match e {
            Expr::Arg { index, .. } => {
                let t = self.typing.arg_types[*index as usize];
                // Parameters after retptr and excinfo, skipping ghost-typed arguments.
                let pos = 2 + self.typing.arg_types[..*index as usize]
                    .iter()
                    .filter(|&&a| value_type(self.ctx, a).is_some())
                    .count();
                let v = if value_type(self.ctx, t).is_some() {
                    self.func.get_nth_param(pos as u32)
                } else {
                    None
                };
                (v, t)
            }
            Expr::Const(c) => self.constant(c)?,
            Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
                GlobalKind::Const(c) => self.constant(c)?,
                _ => (None, NONE),
            },
            Expr::Var(v) | Expr::Cast { value: v } => (self.load(*v)?, self.ty(*v)),
            Expr::GetAttr { value, attr } => match self.ty(*value).get() {
                Type::Module(m) if m == "math" => {
                    let c = match attr.as_str() {
                        "pi" => std::f64::consts::PI,
                        "e" => std::f64::consts::E,
                        "tau" => std::f64::consts::TAU,
                        "inf" => f64::INFINITY,
                        "nan" => f64::NAN,
                        _ => return Ok((None, NONE)),
                    };
                    (Some(self.ctx.f64_type().const_float(c).into()), FLOAT64)
                }
                _ => {
                    return Err(self.unsupported(format!(
                        "attribute '{attr}' of {} cannot be lowered by numba-rs yet",
                        self.ty(*value)
                    )))
                }
            },
            Expr::BinOp { op, lhs, rhs } | Expr::InplaceBinOp { op, lhs, rhs } => {
                let sig = self.sig(id)?;
                if matches!(op, BinOp::Is | BinOp::IsNot) {
                    let (lt, rt) = (self.ty(*lhs), self.ty(*rhs));
                    let same = if lt == NONE && rt == NONE {
                        true
                    } else if lt == NONE || rt == NONE || lt != rt {
                        false
                    } else {
                        return Err(self.unsupported(format!(
                            "'is' between two values of type {lt} is not supported"
                        )));
                    };
                    let r = same == (*op == BinOp::Is);
                    return Ok((
                        Some(self.ctx.bool_type().const_int(u64::from(r), false).into()),
                        BOOLEAN,
                    ));
                }
                let l = self.load_req(*lhs)?;
                let r = self.load_req(*rhs)?;
                let l = self.cast(l, self.ty(*lhs), sig.args[0])?;
                let r = self.cast(r, self.ty(*rhs), sig.args[1])?;
                (Some(self.binop(*op, l, r, &sig)?), sig.ret)
            }
            Expr::Unary { op, value } => {
                let sig = self.sig(id)?;
                let v = self.load_req(*value)?;
                let v = self.cast(v, self.ty(*value), sig.args[0])?;
                let t = sig.args[0];
                let r: BasicValueEnum = match op {
                    UnaryOp::Pos => v,
                    UnaryOp::Neg if t.is_float() => {
                        self.b.build_float_neg(v.into_float_value(), "").l()?.into()
                    }
                    UnaryOp::Neg => self.b.build_int_neg(v.into_int_value(), "").l()?.into(),
                    UnaryOp::Invert => self.b.build_not(v.into_int_value(), "").l()?.into(),
                    UnaryOp::Not => {
                        let c = self.truth(v, t)?;
                        self.b.build_not(c, "").l()?.into()
                    }
                };
                (Some(r), sig.ret)
            }
            Expr::Call { args, .. } => {
                let sig = self.sig(id)?;
                let mut vals = Vec::with_capacity(args.len());
                for (a, &to) in args.iter().zip(&sig.args) {
                    match self.load(*a)? {
                        Some(v) => vals.push(Some(self.cast(v, self.ty(*a), to)?)),
                        None => vals.push(None),
                    }
                }
                (self.call(&sig, &vals)?, sig.ret)
            }
            Expr::GetIter { value } => {
                let st = self.load_req(*value)?.into_struct_value();
                let storage_ty = range_iter_storage(self.ctx);
                // One iterator state per getiter site.
                let storage = self.alloca_in_entry(storage_ty.into(), "range_iter")?;
                let start = self.b.build_extract_value(st, 0, "").l()?;
                let stop = self.b.build_extract_value(st, 1, "").l()?;
                let step = self.b.build_extract_value(st, 2, "").l()?;
                for (i, v) in [start, stop, step].into_iter().enumerate() {
                    let p = self
                        .b
                        .build_struct_gep(storage_ty, storage, i as u32, "")
                        .l()?;
                    self.b.build_store(p, v).l()?;
                }
                (Some(storage.into()), RANGE_ITER64)
            }
            Expr::IterNext { value } => {
                let storage = self.load_req(*value)?.into_pointer_value();
                let storage_ty = range_iter_storage(self.ctx);
                let pc = self.b.build_struct_gep(storage_ty, storage, 0, "").l()?;
                let ps = self.b.build_struct_gep(storage_ty, storage, 1, "").l()?;
                let pst = self.b.build_struct_gep(storage_ty, storage, 2, "").l()?;
                let cur = self.b.build_load(i64t, pc, "cur").l()?.into_int_value();
                let stop = self.b.build_load(i64t, ps, "stop").l()?.into_int_value();
                let step = self.b.build_load(i64t, pst, "step").l()?.into_int_value();
                let up = self
                    .b
                    .build_int_compare(IntPredicate::SGT, step, i64t.const_zero(), "")
                    .l()?;
                let lt = self
                    .b
                    .build_int_compare(IntPredicate::SLT, cur, stop, "")
                    .l()?;
                let gt = self
                    .b
                    .build_int_compare(IntPredicate::SGT, cur, stop, "")
                    .l()?;
                let valid = self
                    .b
                    .build_select(up, lt, gt, "valid")
                    .l()?
                    .into_int_value();
                let next = self.b.build_int_add(cur, step, "").l()?;
                let newcur = self.b.build_select(valid, next, cur, "").l()?;
                self.b.build_store(pc, newcur).l()?;
                let pair_t = intern(Type::Pair(INT64, BOOLEAN));
                let st = value_type(self.ctx, pair_t)
                    .ok_or_else(|| LowerError::Llvm("pair".into()))?
                    .into_struct_type();
                let p = self.b.build_insert_value(st.get_undef(), cur, 0, "").l()?;
                let p = self.b.build_insert_value(p, valid, 1, "").l()?;
                (Some(p.into_struct_value().into()), pair_t)
            }
            Expr::PairFirst { value } | Expr::PairSecond { value } => {
                let idx = u32::from(matches!(e, Expr::PairSecond { .. }));
                let Type::Pair(a, bt) = self.ty(*value).get() else {
                    return Err(self.unsupported("expected a pair".into()));
                };
                let p = self.load_req(*value)?.into_struct_value();
                (
                    Some(self.b.build_extract_value(p, idx, "").l()?),
                    if idx == 0 { a } else { bt },
                )
            }
            Expr::BuildTuple { items } => {
                let tys: Vec<TypeId> = items.iter().map(|v| self.ty(*v)).collect();
                let t = numba_typeinfer::types::tuple_of(&tys);
                let st = value_type(self.ctx, t)
                    .ok_or_else(|| self.unsupported(format!("tuple {t} cannot be lowered")))?
                    .into_struct_type();
                let mut agg = st.get_undef();
                for (i, v) in items.iter().enumerate() {
                    let x = self.load_req(*v)?;
                    let x = self.cast(x, tys[i], tuple_elems(t)[i])?;
                    agg = self
                        .b
                        .build_insert_value(agg, x, i as u32, "")
                        .l()?
                        .into_struct_value();
                }
                (Some(agg.into()), t)
            }
            Expr::ExhaustIter { value, .. } => (self.load(*value)?, self.ty(*value)),
            Expr::StaticGetItem { value, index, .. } => {
                let t = self.ty(*value);
                let elems = tuple_elems(t);
                let et = *elems
                    .get(*index as usize)
                    .ok_or_else(|| self.unsupported("tuple index out of range".into()))?;
                let sv = self.load_req(*value)?.into_struct_value();
                (
                    Some(self.b.build_extract_value(sv, *index as u32, "").l()?),
                    et,
                )
            }
            other => {
                return Err(self.unsupported(format!(
                    "{} cannot be lowered by numba-rs yet",
                    self.ir.expr_to_string(other)
                )))
            }
        })
    }

    fn sig(&self, id: ExprId) -> R<Signature> {
        self.typing
            .calltypes
            .get(&id)
            .cloned()
            .ok_or_else(|| self.unsupported("operation was not typed".into()))
    }

    fn constant(&self, c: &Constant) -> R<(Option<BasicValueEnum<'ctx>>, TypeId)> {
        Ok(match c {
            Constant::Int(i) => (
                Some(self.ctx.i64_type().const_int(*i as u64, true).into()),
                INT64,
            ),
            Constant::Bool(b) => (
                Some(self.ctx.bool_type().const_int(u64::from(*b), false).into()),
                BOOLEAN,
            ),
            Constant::Float(f) => (Some(self.ctx.f64_type().const_float(*f).into()), FLOAT64),
            Constant::None => (None, NONE),
            Constant::Str(_) => (None, UNICODE),
            other => {
                return Err(self.unsupported(format!(
                    "constant {} cannot be lowered by numba-rs yet",
                    other.py_repr()
                )))
            }
        })
    }

    fn binop(
        &mut self,
        op: BinOp,
        l: BasicValueEnum<'ctx>,
        r: BasicValueEnum<'ctx>,
        sig: &Signature,
    ) -> R<BasicValueEnum<'ctx>> {
        let t = sig.args[0];
        if t.is_float() {
            self.float_binop(op, l.into_float_value(), r, sig)
        } else {
            self.int_binop(op, l.into_int_value(), r.into_int_value(), t, sig.ret)
        }
    }

    fn float_binop(
        &mut self,
        op: BinOp,
        a: FloatValue<'ctx>,
        r: BasicValueEnum<'ctx>,
        sig: &Signature,
    ) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let ft = a.get_type();
        if op == BinOp::Pow {
            let e = if sig.args[1].is_float() {
                r.into_float_value()
            } else {
                b.build_signed_int_to_float(r.into_int_value(), ft, "")
                    .l()?
            };
            let f = self.intrinsic("llvm.pow", &[ft.into()])?;
            return Ok(self.call_float(f, &[a, e])?.into());
        }
        let bv = r.into_float_value();
        let cmp = |p: FloatPredicate| -> R<BasicValueEnum<'ctx>> {
            Ok(b.build_float_compare(p, a, bv, "").l()?.into())
        };
        Ok(match op {
            BinOp::Add => b.build_float_add(a, bv, "").l()?.into(),
            BinOp::Sub => b.build_float_sub(a, bv, "").l()?.into(),
            BinOp::Mul => b.build_float_mul(a, bv, "").l()?.into(),
            BinOp::Lt => cmp(FloatPredicate::OLT)?,
            BinOp::Le => cmp(FloatPredicate::OLE)?,
            BinOp::Gt => cmp(FloatPredicate::OGT)?,
            BinOp::Ge => cmp(FloatPredicate::OGE)?,
            BinOp::Eq => cmp(FloatPredicate::OEQ)?,
            BinOp::Ne => cmp(FloatPredicate::UNE)?,
            BinOp::TrueDiv | BinOp::FloorDiv | BinOp::Mod => {
                let zero = self
                    .b
                    .build_float_compare(FloatPredicate::OEQ, bv, ft.const_zero(), "")
                    .l()?;
                let msg = if op == BinOp::Mod {
                    "modulo by zero"
                } else {
                    "division by zero"
                };
                self.raise_if(zero, "ZeroDivisionError", msg)?;
                let b = &self.b;
                if op == BinOp::TrueDiv {
                    return Ok(b.build_float_div(a, bv, "").l()?.into());
                }
                // Python's float divmod: the remainder takes the divisor's sign.
                let m = b.build_float_rem(a, bv, "").l()?;
                let m_nonzero = b
                    .build_float_compare(FloatPredicate::UNE, m, ft.const_zero(), "")
                    .l()?;
                let m_neg = b
                    .build_float_compare(FloatPredicate::OLT, m, ft.const_zero(), "")
                    .l()?;
                let b_neg = b
                    .build_float_compare(FloatPredicate::OLT, bv, ft.const_zero(), "")
                    .l()?;
                let signs_differ = b.build_xor(m_neg, b_neg, "").l()?;
                let fix = b.build_and(m_nonzero, signs_differ, "").l()?;
                let m_fixed = b.build_float_add(m, bv, "").l()?;
                let m_res = b.build_select(fix, m_fixed, m, "").l()?.into_float_value();
                if op == BinOp::Mod {
                    // A zero remainder takes the divisor's sign too.
                    let cs = self.intrinsic("llvm.copysign", &[ft.into()])?;
                    let zero_signed = self.call_float(cs, &[ft.const_zero(), bv])?;
                    let m_is_zero = self
                        .b
                        .build_float_compare(FloatPredicate::OEQ, m_res, ft.const_zero(), "")
                        .l()?;
                    return self.b.build_select(m_is_zero, zero_signed, m_res, "").l();
                }
                let diff = self.b.build_float_sub(a, m_res, "").l()?;
                let div = self.b.build_float_div(diff, bv, "").l()?;
                let floored = self.float_unary("floor", div)?;
                let b = &self.b;
                let frac = b.build_float_sub(div, floored, "").l()?;
                let half = ft.const_float(0.5);
                let round_up = b
                    .build_float_compare(FloatPredicate::OGT, frac, half, "")
                    .l()?;
                let plus1 = b.build_float_add(floored, ft.const_float(1.0), "").l()?;
                let q = b
                    .build_select(round_up, plus1, floored, "")
                    .l()?
                    .into_float_value();
                let div_zero = b
                    .build_float_compare(FloatPredicate::OEQ, div, ft.const_zero(), "")
                    .l()?;
                let quot = b.build_float_div(a, bv, "").l()?;
                let cs = self.intrinsic("llvm.copysign", &[ft.into()])?;
                let signed_zero = self.call_float(cs, &[ft.const_zero(), quot])?;
                self.b.build_select(div_zero, signed_zero, q, "").l()?
            }
            _ => {
                return Err(self.unsupported(format!(
                    "operator '{}' on {} is not supported by numba-rs yet",
                    op.symbol(),
                    sig.args[0]
                )))
            }
        })
    }

    fn int_binop(
        &mut self,
        op: BinOp,
        a: IntValue<'ctx>,
        bv: IntValue<'ctx>,
        t: TypeId,
        ret: TypeId,
    ) -> R<BasicValueEnum<'ctx>> {
        let signed = t.is_signed() || t == BOOLEAN;
        let it = a.get_type();
        let zero = it.const_zero();
        let pred = |s: IntPredicate, u: IntPredicate| if signed && t != BOOLEAN { s } else { u };
        let cmp = |b: &Builder<'ctx>, p: IntPredicate| -> R<BasicValueEnum<'ctx>> {
            Ok(b.build_int_compare(p, a, bv, "").l()?.into())
        };
        let b = &self.b;
        Ok(match op {
            BinOp::Add => b.build_int_add(a, bv, "").l()?.into(),
            BinOp::Sub => b.build_int_sub(a, bv, "").l()?.into(),
            BinOp::Mul => b.build_int_mul(a, bv, "").l()?.into(),
            BinOp::And => b.build_and(a, bv, "").l()?.into(),
            BinOp::Or => b.build_or(a, bv, "").l()?.into(),
            BinOp::Xor => b.build_xor(a, bv, "").l()?.into(),
            BinOp::Lt => cmp(b, pred(IntPredicate::SLT, IntPredicate::ULT))?,
            BinOp::Le => cmp(b, pred(IntPredicate::SLE, IntPredicate::ULE))?,
            BinOp::Gt => cmp(b, pred(IntPredicate::SGT, IntPredicate::UGT))?,
            BinOp::Ge => cmp(b, pred(IntPredicate::SGE, IntPredicate::UGE))?,
            BinOp::Eq => cmp(b, IntPredicate::EQ)?,
            BinOp::Ne => cmp(b, IntPredicate::NE)?,
            BinOp::LShift | BinOp::RShift => {
                let neg = b.build_int_compare(IntPredicate::SLT, bv, zero, "").l()?;
                self.raise_if(neg, "ValueError", "negative shift count")?;
                let b = &self.b;
                let width = it.const_int(u64::from(it.get_bit_width()), false);
                let big = b.build_int_compare(IntPredicate::UGE, bv, width, "").l()?;
                let maxsh = it.const_int(u64::from(it.get_bit_width() - 1), false);
                let sh = b.build_select(big, maxsh, bv, "").l()?.into_int_value();
                if op == BinOp::LShift {
                    let v = b.build_left_shift(a, sh, "").l()?;
                    b.build_select(big, zero, v, "").l()?
                } else {
                    b.build_right_shift(a, sh, signed, "").l()?.into()
                }
            }
            BinOp::FloorDiv | BinOp::Mod => {
                let is_zero = b.build_int_compare(IntPredicate::EQ, bv, zero, "").l()?;
                let msg = if op == BinOp::Mod {
                    "integer modulo by zero"
                } else {
                    "integer division by zero"
                };
                self.raise_if(is_zero, "ZeroDivisionError", msg)?;
                let b = &self.b;
                if !signed {
                    return Ok(if op == BinOp::Mod {
                        b.build_int_unsigned_rem(a, bv, "").l()?.into()
                    } else {
                        b.build_int_unsigned_div(a, bv, "").l()?.into()
                    });
                }
                // Avoid INT_MIN / -1 overflow (undefined in LLVM): divide by 1 instead and
                // negate, which wraps as Numba's result does.
                let minus1 = b
                    .build_int_compare(IntPredicate::EQ, bv, it.const_all_ones(), "")
                    .l()?;
                let safe_b = b
                    .build_select(minus1, it.const_int(1, false), bv, "")
                    .l()?
                    .into_int_value();
                let q = b.build_int_signed_div(a, safe_b, "").l()?;
                let r = b.build_int_signed_rem(a, safe_b, "").l()?;
                let r_nonzero = b.build_int_compare(IntPredicate::NE, r, zero, "").l()?;
                let x = b.build_xor(r, safe_b, "").l()?;
                let signs_differ = b.build_int_compare(IntPredicate::SLT, x, zero, "").l()?;
                let adjust = b.build_and(r_nonzero, signs_differ, "").l()?;
                if op == BinOp::FloorDiv {
                    let q1 = b.build_int_sub(q, it.const_int(1, false), "").l()?;
                    let q = b.build_select(adjust, q1, q, "").l()?.into_int_value();
                    let negq = b.build_int_neg(a, "").l()?;
                    b.build_select(minus1, negq, q, "").l()?
                } else {
                    let r1 = b.build_int_add(r, safe_b, "").l()?;
                    let r = b.build_select(adjust, r1, r, "").l()?;
                    b.build_select(minus1, zero.into(), r, "").l()?
                }
            }
            BinOp::TrueDiv => {
                return Err(self.unsupported("integer true division must be typed as float".into()))
            }
            BinOp::Pow => self.int_pow(a, bv, ret)?,
            _ => {
                return Err(self.unsupported(format!(
                    "operator '{}' on {t} is not supported by numba-rs yet",
                    op.symbol()
                )))
            }
        })
    }

    /// Numba's `int_power_impl` for integer results: repeated squaring; negative exponents
    /// give 0 except for bases 1 and -1, and raise ZeroDivisionError for base 0.
    fn int_pow(
        &mut self,
        a: IntValue<'ctx>,
        e: IntValue<'ctx>,
        _ret: TypeId,
    ) -> R<BasicValueEnum<'ctx>> {
        let it = a.get_type();
        let ctx = self.ctx;
        let zero = it.const_zero();
        let one = it.const_int(1, false);
        let neg = self
            .b
            .build_int_compare(IntPredicate::SLT, e, zero, "")
            .l()?;
        let a_zero = self
            .b
            .build_int_compare(IntPredicate::EQ, a, zero, "")
            .l()?;
        let bad = self.b.build_and(neg, a_zero, "").l()?;
        self.raise_if(
            bad,
            "ZeroDivisionError",
            "0 cannot be raised to a negative power",
        )?;
        let pre = self
            .b
            .get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
        let lp = ctx.append_basic_block(self.func, "pow.loop");
        let body = ctx.append_basic_block(self.func, "pow.body");
        let done = ctx.append_basic_block(self.func, "pow.done");
        let b = &self.b;
        // Loop on |e| (for negative e the loop result only matters for bases 1 and -1).
        let abs_e = {
            let ne = b.build_int_neg(e, "").l()?;
            b.build_select(neg, ne, e, "").l()?.into_int_value()
        };
        b.build_unconditional_branch(lp).l()?;
        b.position_at_end(lp);
        let r_phi = b.build_phi(it, "r").l()?;
        let base_phi = b.build_phi(it, "base").l()?;
        let exp_phi = b.build_phi(it, "exp").l()?;
        let exp_v = exp_phi.as_basic_value().into_int_value();
        let more = b.build_int_compare(IntPredicate::NE, exp_v, zero, "").l()?;
        b.build_conditional_branch(more, body, done).l()?;
        b.position_at_end(body);
        let r_v = r_phi.as_basic_value().into_int_value();
        let base_v = base_phi.as_basic_value().into_int_value();
        let bit = b.build_and(exp_v, one, "").l()?;
        let odd = b.build_int_compare(IntPredicate::NE, bit, zero, "").l()?;
        let rm = b.build_int_mul(r_v, base_v, "").l()?;
        let r_next = b.build_select(odd, rm, r_v, "").l()?.into_int_value();
        let base_next = b.build_int_mul(base_v, base_v, "").l()?;
        let exp_next = b.build_right_shift(exp_v, one, false, "").l()?;
        b.build_unconditional_branch(lp).l()?;
        r_phi.add_incoming(&[(&one, pre), (&r_next, body)]);
        base_phi.add_incoming(&[(&a, pre), (&base_next, body)]);
        exp_phi.add_incoming(&[(&abs_e, pre), (&exp_next, body)]);
        b.position_at_end(done);
        let pos_result = r_phi.as_basic_value().into_int_value();
        // Negative exponent: 1/r truncated, i.e. r itself for |a| == 1, else 0.
        let a_is_one = b.build_int_compare(IntPredicate::EQ, a, one, "").l()?;
        let a_is_m1 = b
            .build_int_compare(IntPredicate::EQ, a, it.const_all_ones(), "")
            .l()?;
        let unit = b.build_or(a_is_one, a_is_m1, "").l()?;
        let neg_result = b
            .build_select(unit, pos_result, zero, "")
            .l()?
            .into_int_value();
        b.build_select(neg, neg_result, pos_result, "").l()
    }

    fn call(
        &mut self,
        sig: &Signature,
        vals: &[Option<BasicValueEnum<'ctx>>],
    ) -> R<Option<BasicValueEnum<'ctx>>> {
        let arg = |i: usize| -> R<BasicValueEnum<'ctx>> {
            vals.get(i)
                .copied()
                .flatten()
                .ok_or_else(|| LowerError::Unsupported {
                    message: "missing argument value".into(),
                    line: 0,
                })
        };
        match &sig.key {
            ImplKey::Function(key) => {
                let key = key.as_str();
                if let Some(name) = key.strip_prefix("math.") {
                    return self.call_math(name, sig, vals).map(Some);
                }
                Ok(Some(match key {
                    "bool" => match vals.first() {
                        Some(Some(v)) => self.truth(*v, sig.args[0])?.into(),
                        _ => self.ctx.bool_type().const_zero().into(),
                    },
                    "int" | "float" => match vals.first() {
                        Some(Some(v)) => self.cast(*v, sig.args[0], sig.ret)?,
                        _ => value_type(self.ctx, sig.ret)
                            .map(|t| t.const_zero())
                            .ok_or_else(|| self.unsupported("bad cast".into()))?,
                    },
                    "abs" => {
                        let v = arg(0)?;
                        if sig.args[0].is_float() {
                            self.float_unary("fabs", v.into_float_value())?.into()
                        } else {
                            let iv = v.into_int_value();
                            let n = self.b.build_int_neg(iv, "").l()?;
                            let lt = self
                                .b
                                .build_int_compare(
                                    IntPredicate::SLT,
                                    iv,
                                    iv.get_type().const_zero(),
                                    "",
                                )
                                .l()?;
                            self.b.build_select(lt, n, iv, "").l()?
                        }
                    }
                    "min" | "max" => {
                        let t = sig.args[0];
                        let mut acc = arg(0)?;
                        for i in 1..vals.len() {
                            let x = arg(i)?;
                            // min keeps the first unless a later one is smaller (Python).
                            let better = if t.is_float() {
                                let p = if key == "min" {
                                    FloatPredicate::OLT
                                } else {
                                    FloatPredicate::OGT
                                };
                                self.b
                                    .build_float_compare(
                                        p,
                                        x.into_float_value(),
                                        acc.into_float_value(),
                                        "",
                                    )
                                    .l()?
                            } else {
                                let s = t.is_signed();
                                let p = match (key == "min", s) {
                                    (true, true) => IntPredicate::SLT,
                                    (true, false) => IntPredicate::ULT,
                                    (false, true) => IntPredicate::SGT,
                                    (false, false) => IntPredicate::UGT,
                                };
                                self.b
                                    .build_int_compare(
                                        p,
                                        x.into_int_value(),
                                        acc.into_int_value(),
                                        "",
                                    )
                                    .l()?
                            };
                            acc = self.b.build_select(better, x, acc, "").l()?;
                        }
                        acc
                    }
                    "round" if vals.len() == 2 => {
                        // round(x, n): scale by 10**|n|, round half to even, scale back (the
                        // approach of Numba's `round_ndigits`).
                        let x = arg(0)?.into_float_value();
                        let n = arg(1)?.into_int_value();
                        let ft = x.get_type();
                        let zero = self.ctx.i64_type().const_zero();
                        let neg = self
                            .b
                            .build_int_compare(IntPredicate::SLT, n, zero, "")
                            .l()?;
                        let abs_n = self
                            .b
                            .build_select(neg, self.b.build_int_neg(n, "").l()?, n, "")
                            .l()?;
                        let e = self
                            .b
                            .build_signed_int_to_float(abs_n.into_int_value(), ft, "")
                            .l()?;
                        let pow = self.intrinsic("llvm.pow", &[ft.into()])?;
                        let scale = self.call_float(pow, &[ft.const_float(10.0), e])?;
                        let up = self.b.build_float_mul(x, scale, "").l()?;
                        let down = self.b.build_float_div(x, scale, "").l()?;
                        let y = self
                            .b
                            .build_select(neg, down, up, "")
                            .l()?
                            .into_float_value();
                        let r = self.float_unary("roundeven", y)?;
                        let back_up = self.b.build_float_div(r, scale, "").l()?;
                        let back_down = self.b.build_float_mul(r, scale, "").l()?;
                        self.b.build_select(neg, back_down, back_up, "").l()?
                    }
                    "round" => {
                        let v = arg(0)?;
                        if sig.args[0].is_float() {
                            let r = self.float_unary("roundeven", v.into_float_value())?;
                            self.cast(r.into(), FLOAT64, INT64)?
                        } else {
                            v
                        }
                    }
                    "range" => {
                        let i64t = self.ctx.i64_type();
                        let (start, stop, step) = match vals.len() {
                            1 => (
                                i64t.const_zero(),
                                arg(0)?.into_int_value(),
                                i64t.const_int(1, false),
                            ),
                            2 => (
                                arg(0)?.into_int_value(),
                                arg(1)?.into_int_value(),
                                i64t.const_int(1, false),
                            ),
                            _ => (
                                arg(0)?.into_int_value(),
                                arg(1)?.into_int_value(),
                                arg(2)?.into_int_value(),
                            ),
                        };
                        if vals.len() == 3 {
                            let z = self
                                .b
                                .build_int_compare(IntPredicate::EQ, step, i64t.const_zero(), "")
                                .l()?;
                            self.raise_if(z, "ValueError", "range() arg 3 must not be zero")?;
                        }
                        let st = value_type(self.ctx, RANGE_STATE64)
                            .ok_or_else(|| LowerError::Llvm("range".into()))?
                            .into_struct_type();
                        let mut agg = st.get_undef();
                        for (i, v) in [start, stop, step].into_iter().enumerate() {
                            agg = self
                                .b
                                .build_insert_value(agg, v, i as u32, "")
                                .l()?
                                .into_struct_value();
                        }
                        agg.into()
                    }
                    other => {
                        return Err(self.unsupported(format!(
                            "no lowering for function '{other}' in numba-rs yet"
                        )))
                    }
                }))
            }
            ImplKey::Dispatcher { id } => self.call_dispatcher(*id, sig, vals),
            ImplKey::Exception(_) => Ok(None),
            ImplKey::BinOp(_) | ImplKey::Unary(_) => {
                Err(self.unsupported("operator used as a call".into()))
            }
        }
    }

    fn call_math(
        &mut self,
        name: &str,
        sig: &Signature,
        vals: &[Option<BasicValueEnum<'ctx>>],
    ) -> R<BasicValueEnum<'ctx>> {
        let raw = vals
            .first()
            .copied()
            .flatten()
            .ok_or_else(|| self.unsupported("missing argument".into()))?;
        // Integral arguments of floor/ceil/trunc are already the result.
        if sig.args[0].is_integer() {
            return Ok(raw);
        }
        let x = raw.into_float_value();
        let f64t = self.ctx.f64_type();
        Ok(match name {
            "floor" | "ceil" | "trunc" => {
                let r = self.float_unary(name, x)?;
                self.cast(r.into(), FLOAT64, INT64)?
            }
            "isnan" => self
                .b
                .build_float_compare(FloatPredicate::UNO, x, x, "")
                .l()?
                .into(),
            "isinf" | "isfinite" => {
                let ax = self.float_unary("fabs", x)?;
                let inf = f64t.const_float(f64::INFINITY);
                let p = if name == "isinf" {
                    FloatPredicate::OEQ
                } else {
                    FloatPredicate::OLT
                };
                self.b.build_float_compare(p, ax, inf, "").l()?.into()
            }
            "degrees" => self
                .b
                .build_float_mul(x, f64t.const_float(180.0 / std::f64::consts::PI), "")
                .l()?
                .into(),
            "radians" => self
                .b
                .build_float_mul(x, f64t.const_float(std::f64::consts::PI / 180.0), "")
                .l()?
                .into(),
            "gamma" => self.float_unary("tgamma", x)?.into(),
            "pow" | "atan2" | "hypot" | "copysign" | "fmod" => {
                let y = vals
                    .get(1)
                    .copied()
                    .flatten()
                    .ok_or_else(|| self.unsupported("missing argument".into()))?
                    .into_float_value();
                let f = if name == "pow" || name == "copysign" {
                    self.intrinsic(&format!("llvm.{name}"), &[f64t.into()])?
                } else {
                    self.libm(name, 2)
                };
                self.call_float(f, &[x, y])?.into()
            }
            other => self.float_unary(other, x)?.into(),
        })
    }

    fn call_dispatcher(
        &mut self,
        id: u64,
        sig: &Signature,
        vals: &[Option<BasicValueEnum<'ctx>>],
    ) -> R<Option<BasicValueEnum<'ctx>>> {
        let callee = if self.options.self_id == Some(id) && sig.args == self.typing.arg_types {
            self.func
        } else {
            let addr = self
                .linked
                .native_address(id, &sig.args)
                .ok_or_else(|| self.unsupported("called function has not been compiled".into()))?;
            let name = format!("numba_rs.extern.{id}.{addr:x}");
            let f = match self.module.get_function(&name) {
                Some(f) => f,
                None => {
                    self.externals.push((name.clone(), addr));
                    self.module.add_function(
                        &name,
                        native_fn_type(self.ctx, &sig.args),
                        Some(Linkage::External),
                    )
                }
            };
            f
        };
        let ret_ty = value_type(self.ctx, sig.ret);
        // The callee's result slot lives in the entry block.
        let slot = match ret_ty {
            Some(t) => self.alloca_in_entry(t, "callres")?,
            None => self.ctx.ptr_type(AddressSpace::default()).const_null(),
        };
        let mut args: Vec<BasicMetadataValueEnum> = vec![slot.into(), self.excinfo.into()];
        args.extend(
            vals.iter()
                .flatten()
                .map(|v| BasicMetadataValueEnum::from(*v)),
        );
        let status = self
            .b
            .build_call(callee, &args, "status")
            .l()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("native call returned void".into()))?
            .into_int_value();
        // Propagate any non-OK status: the callee already filled excinfo.
        let failed = self
            .b
            .build_int_compare(
                IntPredicate::NE,
                status,
                self.ctx.i32_type().const_zero(),
                "",
            )
            .l()?;
        let fail_bb = self.ctx.append_basic_block(self.func, "call.fail");
        let ok_bb = self.ctx.append_basic_block(self.func, "call.ok");
        self.b
            .build_conditional_branch(failed, fail_bb, ok_bb)
            .l()?;
        self.b.position_at_end(fail_bb);
        self.b.build_return(Some(&status)).l()?;
        self.b.position_at_end(ok_bb);
        match ret_ty {
            Some(t) => Ok(Some(self.b.build_load(t, slot, "").l()?)),
            None => Ok(None),
        }
    }

    /// `i32 entry(ret*, excinfo**, const u64* args)`: unpack 8-byte slots and call.
    fn build_entry_wrapper(&mut self, name: &str) -> R<()> {
        let ctx = self.ctx;
        let ptr = ctx.ptr_type(AddressSpace::default());
        let fnty = ctx
            .i32_type()
            .fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
        let f = self.module.add_function(name, fnty, None);
        let bb = ctx.append_basic_block(f, "entry");
        let b = ctx.create_builder();
        b.position_at_end(bb);
        let p = |i: u32| {
            f.get_nth_param(i)
                .map(|p| p.into_pointer_value())
                .ok_or_else(|| LowerError::Llvm("param".into()))
        };
        let (ret, exc, argv) = (p(0)?, p(1)?, p(2)?);
        let i64t = ctx.i64_type();
        let mut args: Vec<BasicMetadataValueEnum> = vec![ret.into(), exc.into()];
        for (i, &t) in self.typing.arg_types.iter().enumerate() {
            let Some(lt) = value_type(ctx, t) else {
                continue;
            };
            let gep = unsafe {
                b.build_gep(i64t, argv, &[i64t.const_int(i as u64, false)], "")
                    .l()?
            };
            let raw = b.build_load(i64t, gep, "").l()?.into_int_value();
            let v: BasicValueEnum = match lt {
                BasicTypeEnum::IntType(it) if it.get_bit_width() < 64 => {
                    b.build_int_truncate(raw, it, "").l()?.into()
                }
                BasicTypeEnum::IntType(_) => raw.into(),
                BasicTypeEnum::FloatType(ft) if t == FLOAT64 => {
                    b.build_bit_cast(raw, ft, "").l()?
                }
                BasicTypeEnum::FloatType(ft) => {
                    let d = b
                        .build_bit_cast(raw, ctx.f64_type(), "")
                        .l()?
                        .into_float_value();
                    b.build_float_cast(d, ft, "").l()?.into()
                }
                _ => {
                    return Err(self.unsupported(format!(
                        "argument of type {t} cannot be passed to native code by numba-rs yet"
                    )))
                }
            };
            args.push(v.into());
        }
        let status = b
            .build_call(self.func, &args, "status")
            .l()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("native call returned void".into()))?;
        b.build_return(Some(&status)).l()?;
        Ok(())
    }
}

fn tuple_elems(t: TypeId) -> Vec<TypeId> {
    match t.get() {
        Type::UniTuple(e, n) => vec![e; n as usize],
        Type::Tuple(items) => items,
        _ => vec![],
    }
}
