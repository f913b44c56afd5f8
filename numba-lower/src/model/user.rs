//! Types a host defines with the extension API (numba-py's user types: a
//! `types.Type` subclass with Numba's `StructModel` or `OpaqueModel`).
//!
//! The type itself is [`Type::Opaque`]; what it looks like in LLVM is a fact the host
//! registers here once it knows it (`register_model` runs after the type object is
//! made): the members' types, as a `StructModel` lists them, make an LLVM struct (the
//! tuple model's layout, so fields are read with `extractvalue`); a type with no members
//! registered is a ghost. Values of either cross the boundary as
//! [`crate::callconv::Shape::Boxed`], through the host's box and unbox code that
//! [`crate::boxing`] compiles.

use std::collections::HashMap;
use std::sync::{LazyLock, RwLock};

use numba_typeinfer::types::TypeId;

/// Struct layouts by type.
static USER: LazyLock<RwLock<HashMap<TypeId, Vec<TypeId>>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Lay `t` out as a struct of these members (Numba's `StructModel`).
pub fn register_members(t: TypeId, members: Vec<TypeId>) {
    let mut table = USER.write().unwrap_or_else(|e| e.into_inner());
    table.insert(t, members);
}

/// The members of a struct-laid-out user type (`None`: a ghost).
pub fn members(t: TypeId) -> Option<Vec<TypeId>> {
    let table = USER.read().unwrap_or_else(|e| e.into_inner());
    table.get(&t).cloned()
}
