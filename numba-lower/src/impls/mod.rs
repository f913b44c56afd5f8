//! Built-in lowering implementations, one module per topic (the same topics as
//! numba-typeinfer's templates). Each module's `register` adds its entries; this is the one
//! table of built-ins.

mod array_from;
pub(crate) mod array_ops;
pub(crate) use array_ops::{scalar_call, Loop};
pub(crate) use parfor_elems::arg_combine;
mod arrayexpr;
mod arrays;
mod builtins;
mod calls;
mod cmath;
mod complex;
mod dtypes;
mod eh;
mod flat;
pub(crate) mod float;
pub(crate) mod generators;
pub(crate) mod indexing;
mod inplace;
mod int;
pub(crate) mod iter;
mod linalg;
mod manipulation;
mod math;
mod nan_reductions;
mod nonzero;
pub(crate) mod npdatetime;
mod npgen;
mod numpy;
mod numpy_misc;
pub(crate) mod objmode_with;
mod optional;
mod parfor_elems;
mod power;
pub(crate) use power::static_pow_for;
mod bytes;
pub(crate) mod dicts;
pub(crate) mod jitclass;
pub(crate) mod lists;
mod random;
pub(crate) mod records;
pub(crate) mod sets;
mod slices;
mod sorting;
mod str_methods;
mod tuple;
mod ufunc_call;
mod ufunc_scalar;
pub(crate) mod unicode;
mod view;

use numba_typeinfer::ImplKey;

use crate::registry::Registry;

/// Register every built-in implementation. "Not lowered yet" entries go first, so that
/// the implementations registered after them take precedence.
pub(crate) fn register_all(r: &mut Registry) {
    crate::cuda::register_placeholders(r);
    arrayexpr::register(r);
    numpy::register(r);
    arrays::register(r);
    array_ops::register(r);
    array_ops::register_more(r);
    array_ops::register_predicates(r);
    indexing::register(r);
    inplace::register(r);
    array_from::register(r);
    nan_reductions::register(r);
    nonzero::register(r);
    flat::register(r);
    view::register(r);
    numpy_misc::register(r);
    slices::register(r);
    manipulation::register(r);
    sorting::register(r);
    linalg::register(r);
    int::register(r);
    float::register(r);
    complex::register(r);
    builtins::register(r);
    math::register(r);
    cmath::register(r);
    iter::register(r);
    tuple::register(r);
    unicode::register(r);
    bytes::register(r);
    str_methods::register(r);
    lists::register(r);
    sets::register(r);
    dicts::register(r);
    jitclass::register(r);
    records::register(r);
    npgen::register(r);
    optional::register(r);
    calls::register(r);
    ufunc_call::register(r);
    eh::register(r);
    random::register(r);
    crate::parallel::register(r);
    parfor_elems::register(r);
    // Last: its iterable forms of `sum`/`min`/`max` exclude what earlier entries take.
    generators::register(r);
    // After every operand pattern that would take an optional for its value (later
    // registrations win).
    optional::register_equality(r);
    dtypes::register(r);
    npdatetime::register(r);
}

/// The operator of a `BinOp` key (the registry only calls an implementation with the keys
/// it was registered for).
pub(crate) fn binop_of(key: &ImplKey) -> numba_ir::BinOp {
    match key {
        ImplKey::BinOp(op) => *op,
        other => unreachable!("binary operator implementation called for {other:?}"),
    }
}

/// The operator of a `Unary` key.
pub(crate) fn unary_of(key: &ImplKey) -> numba_ir::UnaryOp {
    match key {
        ImplKey::Unary(op) => *op,
        other => unreachable!("unary operator implementation called for {other:?}"),
    }
}

/// The function name of a `Function` key.
pub(crate) fn function_of(key: &ImplKey) -> &str {
    match key {
        ImplKey::Function(k) => k,
        other => unreachable!("function implementation called for {other:?}"),
    }
}
