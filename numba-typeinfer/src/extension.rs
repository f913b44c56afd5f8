//! Typing templates a host adds at run time: the extension API (`@overload`,
//! `@overload_method`, `@overload_attribute` in numba-py) without Python in the core.
//!
//! An extension's implementation is a jitted function (a dispatcher) that the host
//! chooses per argument types; the inference engine only asks which dispatcher extends
//! a function, method or attribute, then types the call like any call to a dispatcher.
//! Templates numba-rs has built in are tried first, as Numba tries the templates
//! registered before a library's.

use std::sync::OnceLock;

use crate::conv::Conversion;
use crate::types::TypeId;

/// Where a host's templates are looked up (one per process, as Numba's registries).
pub trait ExternalTemplates: Send + Sync {
    /// The dispatcher implementing calls to a function numba-rs types itself (a builtin,
    /// a NumPy or `math` function, an operator, or a built-in method: a `BoundFunction`,
    /// whose dispatcher takes the receiver first) for argument types its own templates
    /// reject.
    fn function(&self, _func: TypeId) -> Option<u64> {
        None
    }
    /// `module.name` for a name the module's own templates do not know (a NumPy
    /// function numba-rs does not implement that a library overloads): its dispatcher.
    fn module_attribute(&self, _module: &str, _name: &str) -> Option<u64> {
        None
    }
    /// `recv.name(...)`: the dispatcher of a method, called with the receiver first.
    fn method(&self, _recv: TypeId, _name: &str) -> Option<u64> {
        None
    }
    /// `recv.name`: the dispatcher computing an attribute from the receiver.
    fn attribute(&self, _recv: TypeId, _name: &str) -> Option<u64> {
        None
    }
    /// A call of an intrinsic (its key starts with [`INTRINSIC_PREFIX`]) with these
    /// argument types (literal types kept: the host tries them and their non-literal
    /// forms in the order the intrinsic asks): its return and argument types, None when
    /// it rejects them, or the error its typing raised.
    fn intrinsic(
        &self,
        _key: &str,
        _args: &[TypeId],
    ) -> Option<Result<(TypeId, Vec<TypeId>), String>> {
        None
    }
    /// An intrinsic's parameter names, to bind keyword arguments.
    fn intrinsic_parameters(&self, _key: &str) -> Option<Vec<String>> {
        None
    }
    /// How a value of a user's type (`Type::Opaque`) converts implicitly to `to` (Numba's
    /// `Type.can_convert_to`), None when it does not. Lowered through [`CAST_KEY`].
    fn conversion(&self, _from: TypeId, _to: TypeId) -> Option<Conversion> {
        None
    }
    /// Whether the host prints values of a user's type itself (Numba's `print_item`
    /// lowering), through [`PRINT_ITEM_KEY`].
    fn prints(&self, _t: TypeId) -> bool {
        false
    }
}

/// The intrinsic key of an implicit conversion of a user's type: the host's code for a
/// call with one argument of the source type, returning the target type.
pub const CAST_KEY: &str = "intrinsic.ext.cast";

/// The intrinsic key of printing one value of a user's type (no separator, no newline):
/// the host's code for a call with that argument, returning none.
pub const PRINT_ITEM_KEY: &str = "intrinsic.ext.print_item";

/// The function key of a host's intrinsics (`intrinsic.ext.<n>`): typed by
/// [`ExternalTemplates::intrinsic`], lowered by numba-lower's `external` code generator.
pub const INTRINSIC_PREFIX: &str = "intrinsic.ext.";

static EXTERNAL: OnceLock<Box<dyn ExternalTemplates>> = OnceLock::new();

/// Install the host's templates; the first installation wins (false after it).
pub fn install(templates: Box<dyn ExternalTemplates>) -> bool {
    EXTERNAL.set(templates).is_ok()
}

/// The installed templates, if a host installed any.
pub fn external() -> Option<&'static dyn ExternalTemplates> {
    EXTERNAL.get().map(|b| b.as_ref())
}

/// The key of a method an extension adds (`BoundFunction`'s key): the dispatcher id,
/// which no built-in key looks like.
pub fn method_key(dispatcher: u64) -> String {
    format!("@extension:{dispatcher}")
}

/// The dispatcher behind a [`method_key`].
pub fn method_dispatcher(key: &str) -> Option<u64> {
    key.strip_prefix("@extension:")?.parse().ok()
}

/// Whether a call binds literal argument types to a dispatcher (Numba's overload
/// templates see literals; jitted functions do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LiteralArgs {
    /// Literal arguments are passed as their base types (a jitted function).
    #[default]
    Never,
    /// Base types first; literal types when the base types find no implementation
    /// (Numba's `prefer_literal=False`).
    Fallback,
    /// Literal types first, then base types (`prefer_literal=True`).
    Prefer,
}
