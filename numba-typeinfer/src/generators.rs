//! Typing of generators and of the builtins that consume any iterable.
//!
//! A generator function's result type is computed by the inference engine (`infer`'s
//! `generator_type`); here are its methods (`send`, `close`), `next(iterator[, default])`
//! and the builtins that loop over an iterable (`sum`, `min`, `max`, `any`, `all`),
//! which accept every type `getiter` types: generators, ranges, arrays, homogeneous
//! tuples, `enumerate`/`zip`. The existing templates of `sum`, `min` and `max` (tuples,
//! arrays) are tried first.

use crate::context::{arith_type, BaseContext, FunctionTemplate};
use crate::numpy::{getiter, is_iterator, iter_yield};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

/// `generator.send` and `generator.close` as attributes of a generator.
pub fn getattr(gen: TypeId, attr: &str) -> Option<TypeId> {
    matches!(attr, "send" | "close").then(|| {
        intern(Type::BoundFunction {
            key: format!("generator.{attr}"),
            this: gen,
        })
    })
}

/// A call of a generator's method.
pub fn method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let Type::Generator {
        yield_type,
        send_type,
        ..
    } = this.get()
    else {
        return None;
    };
    match (key, args) {
        // A generator that never reads a yield's value ignores what is sent (as CPython
        // would, observably); otherwise the value converts to the yield type or is None.
        ("generator.send", [v]) => {
            let v = v.unliteral();
            let ok = send_type == NONE
                || v == NONE
                || crate::conv::can_convert(v, yield_type).is_some_and(|c| {
                    c != crate::conv::Conversion::Unsafe
                        || (v.is_integer() && yield_type.is_integer())
                });
            ok.then(|| sig("generator.send", yield_type, vec![this, v]))
        }
        ("generator.close", []) => Some(sig("generator.close", NONE, vec![this])),
        _ => None,
    }
}

/// The scalar an iterable yields, when `getiter` types it.
/// What iterating `t` yields (literals as their base types).
pub(crate) fn iterable_item(t: TypeId) -> Option<TypeId> {
    let it = getiter(t.unliteral())?;
    iter_yield(it).map(TypeId::unliteral)
}

/// A template tried after the one it wraps (the tuple/array forms of `sum`, `min`, `max`).
struct Fallback {
    first: Option<Box<dyn FunctionTemplate>>,
    then: fn(&[TypeId]) -> Option<Signature>,
    describe: &'static str,
}

impl FunctionTemplate for Fallback {
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        self.first
            .as_ref()
            .and_then(|f| f.generic(args))
            .or_else(|| (self.then)(args))
    }
    fn describe(&self) -> String {
        match &self.first {
            Some(f) => format!("{}, {}", f.describe(), self.describe),
            None => self.describe.to_string(),
        }
    }
}

fn sum_iterable(a: &[TypeId]) -> Option<Signature> {
    match a {
        [x] => {
            let item = iterable_item(*x)?;
            let r = arith_type(&[item])?;
            Some(sig("sum", r, vec![x.unliteral()]))
        }
        [x, start] if start.unliteral().is_number() || start.unliteral() == BOOLEAN => {
            let item = iterable_item(*x)?;
            let r = arith_type(&[item, start.unliteral()])?;
            Some(sig("sum", r, vec![x.unliteral(), r]))
        }
        _ => None,
    }
}

fn minmax_iterable(key: &str, a: &[TypeId]) -> Option<Signature> {
    let [x] = a else { return None };
    let item = iterable_item(*x)?;
    (item.is_scalar() && !item.is_complex()).then(|| sig(key, item, vec![x.unliteral()]))
}

impl BaseContext {
    /// `next`, and the iterable forms of `sum`, `min`, `max`, `any`, `all`.
    pub(crate) fn install_iterables(&mut self) {
        self.register(
            "next",
            Box::new(crate::context::FnTemplate(
                |a: &[TypeId]| match a {
                    [it] if is_iterator(it.unliteral()) => Some(sig(
                        "next",
                        iter_yield(it.unliteral())?,
                        vec![it.unliteral()],
                    )),
                    [it, d] if is_iterator(it.unliteral()) => {
                        let y = iter_yield(it.unliteral())?;
                        let r = crate::conv::unify(y, d.unliteral())?;
                        Some(sig("next", r, vec![it.unliteral(), d.unliteral()]))
                    }
                    _ => None,
                },
                "(iterator,), (iterator, default)",
            )),
        );
        // `iter(x)` is the iterator a `for` loop would take (an iterator is its own).
        self.register(
            "iter",
            Box::new(crate::context::FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => Some(sig("iter", getiter(x.unliteral())?, vec![x.unliteral()])),
                    _ => None,
                },
                "(iterable,)",
            )),
        );
        self.register(
            "dict",
            Box::new(crate::dicts::DictBuiltin(
                "(), (dict,), (iterable of pairs,)",
            )),
        );
        self.register(
            "set",
            Box::new(crate::context::FnTemplate(
                |a: &[TypeId]| crate::sets::builtin(a),
                "(), (iterable,)",
            )),
        );
        for key in ["list", "sorted"] {
            self.register(
                key,
                Box::new(crate::context::FnTemplate(
                    move |a: &[TypeId]| crate::lists::builtin(key, a),
                    "(), (iterable,)",
                )),
            );
        }
        let mut wrap = |key: &'static str, then: fn(&[TypeId]) -> Option<Signature>| {
            let first = self.take_template(key);
            self.register(
                key,
                Box::new(Fallback {
                    first,
                    then,
                    describe: "(iterable,)",
                }),
            );
        };
        wrap("sum", sum_iterable);
        wrap("min", |a| minmax_iterable("min", a));
        wrap("max", |a| minmax_iterable("max", a));
        for key in ["any", "all"] {
            let then: fn(&[TypeId]) -> Option<Signature> = if key == "any" {
                |a| match a {
                    [x] if iterable_item(*x).is_some_and(|t| t.is_scalar()) => {
                        Some(sig("any", BOOLEAN, vec![x.unliteral()]))
                    }
                    _ => None,
                }
            } else {
                |a| match a {
                    [x] if iterable_item(*x).is_some_and(|t| t.is_scalar()) => {
                        Some(sig("all", BOOLEAN, vec![x.unliteral()]))
                    }
                    _ => None,
                }
            };
            wrap(key, then);
        }
    }
}
