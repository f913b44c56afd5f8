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

/// Register a class with these fields: its instance type.
pub fn register(name: &str, fields: Vec<(String, TypeId)>) -> TypeId {
    let mut classes = CLASSES.write().unwrap_or_else(|e| e.into_inner());
    let id = classes.len() as u32;
    let described: Vec<String> = fields.iter().map(|(n, t)| format!("{n}:{t}")).collect();
    classes.push(ClassInfo {
        name: name.to_string(),
        fields,
    });
    intern(Type::ClassInstance {
        id,
        name: format!("{name}#{id}<{}>", described.join(",")),
    })
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
