//! Jitclass instance types (`numba_rs.experimental.jitclass`): a class's fields, by the
//! instance type the registry hands out.
//!
//! An instance is a reference to a heap record of its fields (numba-lower keeps it in a
//! one-item list payload, each field in its boundary slot form, so the payload's
//! reference map releases the fields when the last reference goes). Methods are not
//! here: numba-py registers each as an extension method of the instance type, compiled
//! with `self` first, through the ordinary pipeline.

use std::sync::RwLock;

use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// A registered class.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// The class's `__name__`.
    pub name: String,
    /// Its fields in declaration order.
    pub fields: Vec<(String, TypeId)>,
}

static CLASSES: RwLock<Vec<ClassInfo>> = RwLock::new(Vec::new());

/// Register a class with these fields: its instance type. A class whose fields refer
/// to its own instance type (through a deferred type) registers with none and gets
/// them from [`set_fields`] once its type exists.
pub fn register(name: &str, fields: Vec<(String, TypeId)>) -> TypeId {
    let mut classes = CLASSES.write().unwrap_or_else(|e| e.into_inner());
    let id = classes.len() as u32;
    classes.push(ClassInfo {
        name: name.to_string(),
        fields,
    });
    intern(Type::ClassInstance {
        id,
        name: format!("{name}#{id}"),
    })
}

/// Give a registered class its fields.
pub fn set_fields(t: TypeId, fields: Vec<(String, TypeId)>) -> bool {
    let Type::ClassInstance { id, .. } = t.get() else {
        return false;
    };
    let mut classes = CLASSES.write().unwrap_or_else(|e| e.into_inner());
    match classes.get_mut(id as usize) {
        Some(c) => {
            c.fields = fields;
            true
        }
        None => false,
    }
}

/// How an instance type prints: Numba's `instance.jitclass.Name#id<x:int64,...>`. A
/// field of the class's own type prints by name (the type is recursive).
pub fn describe(id: u32, name: &str) -> String {
    let fields = CLASSES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id as usize)
        .map(|c| c.fields.clone())
        .unwrap_or_default();
    // A field of a class's own type prints by name: the type is recursive.
    fn short(t: TypeId) -> String {
        match t.get() {
            Type::ClassInstance { name, .. } => format!("instance.jitclass.{name}"),
            Type::Optional(x) if matches!(x.get(), Type::ClassInstance { .. }) => {
                format!("OptionalType({})", short(x))
            }
            _ => t.to_string(),
        }
    }
    let shown: Vec<String> = fields
        .iter()
        .map(|(n, t)| format!("{n}:{}", short(*t)))
        .collect();
    format!("instance.jitclass.{name}<{}>", shown.join(","))
}

/// The class behind an instance type.
pub fn info(t: TypeId) -> Option<ClassInfo> {
    let Type::ClassInstance { id, .. } = t.get() else {
        return None;
    };
    CLASSES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id as usize)
        .cloned()
}

/// The instance type of `t`, or of the value an optional `t` may hold.
pub fn instance_of(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::ClassInstance { .. } => Some(t),
        Type::Optional(x) if matches!(x.get(), Type::ClassInstance { .. }) => Some(x),
        _ => None,
    }
}

/// Field `attr` of an instance type: its position and type.
pub fn field(t: TypeId, attr: &str) -> Option<(usize, TypeId)> {
    let info = info(t)?;
    info.fields
        .iter()
        .position(|(n, _)| n == attr)
        .map(|i| (i, info.fields[i].1))
}

/// The key of the builtin that makes an instance with every field zeroed (the
/// constructor numba-py generates calls it, then `__init__`).
pub const NEW: &str = "numba_rs.experimental.jitclass._new";

impl crate::context::BaseContext {
    /// `_new(instance_type)`.
    pub(crate) fn install_jitclass(&mut self) {
        self.register(
            NEW,
            Box::new(crate::context::FnTemplate(
                |a: &[TypeId]| match a {
                    [t] => match t.get() {
                        Type::TypeRef(inst) if info(inst).is_some() => Some(Signature {
                            ret: inst,
                            args: vec![*t],
                            key: ImplKey::Function(NEW.into()),
                        }),
                        _ => None,
                    },
                    _ => None,
                },
                "(instance_type)",
            )),
        );
    }
}
