//! Code a host supplies as LLVM IR text per signature: numba-py's `@intrinsic`, whose
//! body llvmlite's IR builder wrote. The text is parsed into the caller's module (once
//! per symbol) and called with the arguments' values in their data models' LLVM types.

use std::sync::OnceLock;

use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Linkage;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum};
use numba_typeinfer::types::{TypeId, NONE};
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::model::lowered;
use crate::{llvm_err, LowerError, R};

/// Where a host's generated code comes from.
pub trait ExternalCodegen: Send + Sync {
    /// The symbol of a function and the text of an LLVM module defining it, for a call
    /// of `key` with these argument types returning `ret`.
    fn codegen(&self, key: &str, args: &[TypeId], ret: TypeId) -> Result<(String, String), String>;
}

static CODEGEN: OnceLock<Box<dyn ExternalCodegen>> = OnceLock::new();

/// Install the host's code generator; the first installation wins (false after it).
pub fn install(codegen: Box<dyn ExternalCodegen>) -> bool {
    CODEGEN.set(codegen).is_ok()
}

/// Whether calls with this key take their code from the host
/// (`numba_typeinfer::extension::INTRINSIC_PREFIX`).
pub fn is_external(sig: &Signature) -> bool {
    matches!(&sig.key, ImplKey::Function(k) if k.starts_with(numba_typeinfer::extension::INTRINSIC_PREFIX))
}

/// A call of host-generated code: its module linked into the caller's, then called.
pub(crate) fn call_external<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    vals: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(lw.unsupported("an intrinsic call without its key"));
    };
    let codegen = CODEGEN
        .get()
        .ok_or_else(|| lw.unsupported("no host generates code for intrinsics"))?;
    let (symbol, text) = codegen
        .codegen(key, &sig.args, sig.ret)
        .map_err(|m| lw.lowering_error(m))?;
    let f = match lw.module.get_function(&symbol) {
        Some(f) => f,
        None => {
            let buf = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), &symbol);
            let m = lw.ctx.create_module_from_ir(buf).map_err(|e| {
                lw.unsupported(format!(
                    "the LLVM IR an intrinsic generated does not parse: {}",
                    e.to_string()
                ))
            })?;
            m.set_triple(&lw.module.get_triple());
            m.set_data_layout(&lw.module.get_data_layout());
            lw.module
                .link_in_module(m)
                .map_err(|e| LowerError::Llvm(e.to_string()))?;
            let f = lw.module.get_function(&symbol).ok_or_else(|| {
                lw.unsupported(format!(
                    "the intrinsic's module defines no function {symbol}"
                ))
            })?;
            f.set_linkage(Linkage::Internal);
            f
        }
    };
    let args: Vec<BasicMetadataValueEnum<'ctx>> = vals.iter().map(|&v| v.into()).collect();
    let call = lw.b.build_call(f, &args, "").map_err(llvm_err)?;
    if lowered(sig.ret) == NONE {
        return Ok(lw.ghost());
    }
    call.try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm(format!("the intrinsic {symbol} returned no value")))
}

/// The LLVM type of a numba-rs type's values, described for a host's IR builder.
#[derive(Debug, Clone, PartialEq)]
pub enum LlvmTypeDesc {
    Int(u32),
    Float,
    Double,
    Ptr,
    Struct(Vec<LlvmTypeDesc>),
    Array(u32, Box<LlvmTypeDesc>),
}

/// How values of `t` are held in LLVM (its data model's value type).
pub fn llvm_type_desc(t: TypeId) -> R<LlvmTypeDesc> {
    use inkwell::types::BasicTypeEnum as B;
    fn describe(t: B<'_>) -> R<LlvmTypeDesc> {
        Ok(match t {
            B::IntType(i) => LlvmTypeDesc::Int(i.get_bit_width()),
            B::FloatType(f) => {
                if f == f.get_context().f32_type() {
                    LlvmTypeDesc::Float
                } else {
                    LlvmTypeDesc::Double
                }
            }
            B::PointerType(_) => LlvmTypeDesc::Ptr,
            B::StructType(s) => LlvmTypeDesc::Struct(
                s.get_field_types()
                    .into_iter()
                    .map(describe)
                    .collect::<R<Vec<_>>>()?,
            ),
            B::ArrayType(a) => {
                LlvmTypeDesc::Array(a.len(), Box::new(describe(a.get_element_type())?))
            }
            B::VectorType(_) | B::ScalableVectorType(_) => {
                return Err(LowerError::Llvm("vector values have no description".into()))
            }
        })
    }
    let ctx = inkwell::context::Context::create();
    describe(crate::model::value_type(&ctx, lowered(t))?)
}
