//! The registry of lowering implementations, keyed by the very [`ImplKey`] and signature
//! the typing templates resolved (Numba's `BaseContext.get_function(key, sig)`).
//!
//! An entry pairs a key with argument patterns and either an implementation or an explicit
//! "not lowered yet" reason, so a typed operation without an implementation fails with an
//! `UnsupportedError` that names it, and the tidy test can check that every typing key has
//! an entry. Users register their own entries through [`Registry::register`].
//!
//! Later registrations win: lookup takes the first entry, newest first, whose patterns
//! match. So a generic entry (`TypePat::Any`) must be registered *before* the specific
//! ones it should yield to, and an entry meant to take precedence over every operand
//! pattern (`==` with an optional operand) goes last.

use std::collections::HashMap;

use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::{LowerError, R};

/// An implementation: emits code for one operation whose operands were already converted
/// to `sig.args`, returning a value of `sig.ret`.
pub type LowerFn = for<'ctx, 'a> fn(
    &mut FnLower<'ctx, 'a>,
    &Signature,
    &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>>;

/// The lowering of an IR extension node (`arrayexpr`, a parfor, a user's node), by kind.
/// `target` is the variable an expression node assigns (its type is the node's result
/// type); statement nodes get `None` and return `None`. An expression's value is a new
/// reference.
pub type ExtensionLowerFn = for<'ctx, 'a> fn(
    &mut FnLower<'ctx, 'a>,
    &numba_ir::ExtensionNode,
    Option<numba_ir::VarId>,
) -> R<Option<BasicValueEnum<'ctx>>>;

/// A pattern over one argument type.
#[derive(Debug, Clone, Copy)]
pub enum TypePat {
    Any,
    Bool,
    /// Any integer type (not bool).
    Int,
    /// An integer or bool.
    IntOrBool,
    Float,
    Complex,
    /// Any real or complex number type or bool.
    Number,
    Exact(TypeId),
    /// Plain or named tuples.
    Tuple,
    /// A homogeneous tuple.
    UniTuple,
    Optional,
    NoneType,
    /// A module by name (`math`).
    Module(&'static str),
    /// An iterator type.
    Iterator,
    /// Anything a predicate accepts.
    Pred(fn(TypeId) -> bool),
}

impl TypePat {
    pub fn matches(self, t: TypeId) -> bool {
        match self {
            TypePat::Any => true,
            TypePat::Bool => t == BOOLEAN,
            TypePat::Int => t.is_integer(),
            TypePat::IntOrBool => t.is_integer() || t == BOOLEAN,
            TypePat::Float => t.is_float(),
            TypePat::Complex => t.is_complex(),
            TypePat::Number => t.is_scalar(),
            TypePat::Exact(x) => t == x,
            TypePat::Tuple => numba_typeinfer::conv::tuple_items(t).is_some(),
            TypePat::UniTuple => matches!(t.get(), Type::UniTuple(..) | Type::NamedUniTuple { .. }),
            TypePat::Optional => matches!(t.get(), Type::Optional(_)),
            TypePat::NoneType => t == NONE,
            TypePat::Module(m) => matches!(t.get(), Type::Module(n) if n == m),
            TypePat::Iterator => matches!(
                t.get(),
                Type::RangeIter64
                    | Type::Enumerate(_)
                    | Type::Zip(_)
                    | Type::ArrayIter(_)
                    | Type::Generator { .. }
            ),
            TypePat::Pred(f) => f(t),
        }
    }
}

/// The argument patterns of an entry.
#[derive(Debug, Clone)]
pub enum Args {
    /// One pattern per argument.
    Exact(Vec<TypePat>),
    /// Any number of arguments, each matching.
    Variadic(TypePat),
    /// Any number of arguments, at least one matching.
    AnyArg(TypePat),
}

impl Args {
    fn matches(&self, args: &[TypeId]) -> bool {
        match self {
            Args::Exact(p) => {
                p.len() == args.len() && p.iter().zip(args).all(|(p, &a)| p.matches(a))
            }
            Args::Variadic(p) => args.iter().all(|&a| p.matches(a)),
            Args::AnyArg(p) => args.iter().any(|&a| p.matches(a)),
        }
    }
}

/// What an entry does.
#[derive(Clone, Copy)]
pub enum Lowering {
    Impl(LowerFn),
    /// Typed but not lowered yet: the reason names what is missing.
    NotYet(&'static str),
}

impl std::fmt::Debug for Lowering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lowering::Impl(_) => f.write_str("Impl"),
            Lowering::NotYet(r) => write!(f, "NotYet({r:?})"),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    args: Args,
    lowering: Lowering,
}

/// Lowering entries by key, and extension-node lowerings by kind.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    entries: HashMap<ImplKey, Vec<Entry>>,
    extensions: HashMap<String, ExtensionLowerFn>,
}

/// The key every numba-rs ufunc call is registered under.
pub(crate) fn ufunc_key() -> ImplKey {
    ImplKey::UFunc {
        kernel: 0,
        args: Vec::new(),
        ret: numba_typeinfer::types::NONE,
        nin: 0,
        core: None,
    }
}

/// Keys that carry an identity (a dispatcher id, an exception class) share one entry list.
fn normalise(key: &ImplKey) -> ImplKey {
    match key {
        ImplKey::Dispatcher { .. } => ImplKey::Dispatcher { id: 0 },
        ImplKey::UFunc { .. } => ufunc_key(),
        ImplKey::Exception(_) => ImplKey::Exception(String::new()),
        // One entry per receiver kind; the implementation reads the attribute's name.
        ImplKey::SetAttr(_) => ImplKey::SetAttr(String::new()),
        k => k.clone(),
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Add an implementation; later registrations win over earlier ones for the same
    /// arguments (so a user can override a built-in).
    pub fn register(&mut self, key: ImplKey, args: Args, f: LowerFn) {
        self.push(key, args, Lowering::Impl(f));
    }

    /// Lower extension nodes of `kind` with `f` (replacing any earlier entry).
    pub fn register_extension(&mut self, kind: &str, f: ExtensionLowerFn) {
        self.extensions.insert(kind.to_string(), f);
    }

    /// The lowering of extension nodes of `kind`, or an `Unsupported` error naming it.
    pub fn extension(&self, kind: &str) -> R<ExtensionLowerFn> {
        self.extensions
            .get(kind)
            .copied()
            .ok_or_else(|| LowerError::Unsupported {
                message: format!("no lowering registered for IR extension node '{kind}'"),
                line: 0,
            })
    }

    /// Record that `key` is typed but not lowered yet.
    pub fn not_yet(&mut self, key: ImplKey, reason: &'static str) {
        self.push(key, Args::Variadic(TypePat::Any), Lowering::NotYet(reason));
    }

    /// Drop the "not lowered" entries of the keys `which` selects (a target that
    /// implements what the others only type).
    pub fn drop_not_yet(&mut self, which: impl Fn(&ImplKey) -> bool) {
        for (key, entries) in self.entries.iter_mut() {
            if which(key) {
                entries.retain(|e| !matches!(e.lowering, Lowering::NotYet(_)));
            }
        }
    }

    /// Record that `key` with arguments matching `args` is typed but not lowered yet.
    pub fn not_yet_for(&mut self, key: ImplKey, args: Args, reason: &'static str) {
        self.push(key, args, Lowering::NotYet(reason));
    }

    fn push(&mut self, key: ImplKey, args: Args, lowering: Lowering) {
        self.entries
            .entry(normalise(&key))
            .or_default()
            .insert(0, Entry { args, lowering });
    }

    /// Whether any entry (implementation or "not yet") exists for `key`.
    pub fn has_key(&self, key: &ImplKey) -> bool {
        self.entries.contains_key(&normalise(key))
    }

    /// The entry for a typed operation, if any.
    pub fn find(&self, sig: &Signature) -> Option<Lowering> {
        let args: Vec<TypeId> = sig.args.iter().map(|&a| crate::model::lowered(a)).collect();
        self.entries
            .get(&normalise(&sig.key))?
            .iter()
            .find(|e| e.args.matches(&args))
            .map(|e| e.lowering)
    }

    /// The implementation for a typed operation, or an `Unsupported` error naming it.
    pub fn lookup(&self, sig: &Signature) -> R<LowerFn> {
        // A host's intrinsic: its code comes from the host per signature.
        if crate::external::is_external(sig) {
            return Ok(crate::external::call_external);
        }
        match self.find(sig) {
            Some(Lowering::Impl(f)) => Ok(f),
            Some(Lowering::NotYet(reason)) => Err(LowerError::Unsupported {
                message: format!(
                    "{}{sig} is not lowered by numba-rs yet ({reason})",
                    sig.key.describe()
                ),
                line: 0,
            }),
            None => Err(LowerError::Unsupported {
                message: format!(
                    "no lowering implementation of {}{sig} in numba-rs",
                    sig.key.describe()
                ),
                line: 0,
            }),
        }
    }
}
