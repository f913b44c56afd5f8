//! Types a host defines with the extension API (numba-py's user types: a
//! `types.Type` subclass with Numba's `StructModel` or `OpaqueModel`).
//!
//! The type itself is [`Type::Opaque`]; what it looks like in LLVM is a fact the host
//! registers here once it knows it (`register_model` runs after the type object is
//! made): the members' types, as a `StructModel` lists them, make an LLVM struct (the
//! tuple model's layout, so fields are read with `extractvalue`); a type with no members
//! registered is a ghost. Whether the host can box and unbox values of the type is
//! registered too: such values cross the boundary as [`crate::callconv::Shape::Boxed`],
//! through the functions [`crate::boxing`] compiles.

use std::collections::HashMap;
use std::sync::{LazyLock, RwLock};

use numba_typeinfer::types::TypeId;

#[derive(Debug, Clone, Default)]
struct UserType {
    members: Option<Vec<TypeId>>,
    unbox: bool,
    boxes: bool,
}

static USER: LazyLock<RwLock<HashMap<TypeId, UserType>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Lay `t` out as a struct of these members (Numba's `StructModel`).
pub fn register_members(t: TypeId, members: Vec<TypeId>) {
    let mut table = USER.write().unwrap_or_else(|e| e.into_inner());
    table.entry(t).or_default().members = Some(members);
}

/// Values of `t` cross the boundary through the host's code: arguments when it has
/// unbox code, results when it has box code.
pub fn register_boxing(t: TypeId, unbox: bool, boxes: bool) {
    let mut table = USER.write().unwrap_or_else(|e| e.into_inner());
    let entry = table.entry(t).or_default();
    entry.unbox |= unbox;
    entry.boxes |= boxes;
}

/// The members of a struct-laid-out user type (`None`: a ghost).
pub fn members(t: TypeId) -> Option<Vec<TypeId>> {
    let table = USER.read().unwrap_or_else(|e| e.into_inner());
    table.get(&t).and_then(|u| u.members.clone())
}

/// Whether values of `t` cross the boundary through the host's code (either way).
pub fn has_boxing(t: TypeId) -> bool {
    let table = USER.read().unwrap_or_else(|e| e.into_inner());
    table.get(&t).is_some_and(|u| u.unbox || u.boxes)
}

/// Whether the host can make Python objects of `t` (a function may return one).
pub fn can_box(t: TypeId) -> bool {
    let table = USER.read().unwrap_or_else(|e| e.into_inner());
    table.get(&t).is_some_and(|u| u.boxes)
}
