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

/// What kind of record type a registered class is: they differ only in how the type
/// prints (Numba names the two differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    /// A `@jitclass`'s instance type.
    JitClass,
    /// A `structref` type (`numba_rs.experimental.structref`): one per subclass of
    /// `types.StructRef` and field list.
    StructRef,
}

/// A registered class.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// The class's `__name__` (a structref type's `__qualname__`).
    pub name: String,
    /// Its fields in declaration order.
    pub fields: Vec<(String, TypeId)>,
    /// Jitclass or structref.
    pub kind: ClassKind,
    /// The defining class's `module.qualname`: with the kind and the fields it names
    /// the type in an on-disk cache ([`cache_name`]).
    pub key: String,
}

static CLASSES: RwLock<Vec<ClassInfo>> = RwLock::new(Vec::new());

/// Each jitclass's instance type by the dispatcher id of its class object (calling the
/// class constructs an instance; `isinstance(x, Cls)` tests for one).
static CONSTRUCTORS: RwLock<Vec<(u64, TypeId)>> = RwLock::new(Vec::new());

/// Record that dispatcher `id` (the class object in compiled code) makes instances of
/// `t`.
pub fn set_constructor(t: TypeId, id: u64) {
    let mut c = CONSTRUCTORS.write().unwrap_or_else(|e| e.into_inner());
    c.retain(|(d, _)| *d != id);
    c.push((id, t));
}

/// The instance type dispatcher `id` constructs, if it is a jitclass's class object.
pub fn constructed_by(id: u64) -> Option<TypeId> {
    CONSTRUCTORS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(d, _)| *d == id)
        .map(|(_, t)| *t)
}

/// Register a class with these fields: its instance type. A class whose fields refer
/// to its own instance type (through a deferred type) registers with none and gets
/// them from [`set_fields`] once its type exists.
pub fn register(name: &str, fields: Vec<(String, TypeId)>) -> TypeId {
    register_kind(name, name, fields, ClassKind::JitClass)
}

/// Register a record type of this kind whose class is `key` (`module.qualname`; see
/// [`register`]).
pub fn register_kind(
    name: &str,
    key: &str,
    fields: Vec<(String, TypeId)>,
    kind: ClassKind,
) -> TypeId {
    let mut classes = CLASSES.write().unwrap_or_else(|e| e.into_inner());
    let id = classes.len() as u32;
    classes.push(ClassInfo {
        name: name.to_string(),
        fields,
        kind,
        key: key.to_string(),
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

/// How an instance type prints: Numba's `instance.jitclass.Name#id<x:int64,...>`, or a
/// structref's `numba.Name(('x', int64), ...)`. A field of the class's own type prints
/// by name (the type is recursive).
pub fn describe(id: u32, name: &str) -> String {
    let (fields, kind) = CLASSES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id as usize)
        .map(|c| (c.fields.clone(), c.kind))
        .unwrap_or((Vec::new(), ClassKind::JitClass));
    if kind == ClassKind::StructRef {
        return describe_structref(id, &fields);
    }
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

/// Numba's name of a structref type: `numba.` and its class's qualified name, then the
/// field tuple as Python prints it. A field that refers to a structref type being
/// defined (or to this one) prints as `numba.Name#id`, as the type is recursive.
fn describe_structref(id: u32, fields: &[(String, TypeId)]) -> String {
    fn short(t: TypeId, me: u32) -> String {
        match t.get() {
            Type::ClassInstance { id, name } if id == me => format!("numba.{name}"),
            Type::Optional(x) if matches!(x.get(), Type::ClassInstance { id, .. } if id == me) => {
                format!("OptionalType({})", short(x, me))
            }
            _ => t.to_string(),
        }
    }
    let name = CLASSES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id as usize)
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let shown: Vec<String> = fields
        .iter()
        .map(|(n, t)| format!("('{n}', {})", short(*t, id)))
        .collect();
    let comma = if shown.len() == 1 { "," } else { "" };
    format!("numba.{name}({}{comma})", shown.join(", "))
}

/// A name for a record type that [`parse_cache_name`] finds again in another process
/// once the class is registered there: `record[<kind>|<key>|<field>:<type>,...]`.
/// `None` when the fields do not name it (a type referring to itself prints its id,
/// which differs between processes) or another registered class has the same name.
pub fn cache_name(t: TypeId) -> Option<String> {
    let c = info(t)?;
    let kind = match c.kind {
        ClassKind::JitClass => "jitclass",
        ClassKind::StructRef => "structref",
    };
    let fields: Vec<String> = c.fields.iter().map(|(n, f)| format!("{n}:{f}")).collect();
    let text = format!("record[{kind}|{}|{}]", c.key, fields.join(","));
    (parse_cache_name(&text) == Some(t)).then_some(text)
}

/// The registered record type [`cache_name`] named, if exactly one matches.
pub fn parse_cache_name(text: &str) -> Option<TypeId> {
    let body = text.strip_prefix("record[")?.strip_suffix(']')?;
    let mut parts = body.splitn(3, '|');
    let (kind, key, fields) = (parts.next()?, parts.next()?, parts.next()?);
    let kind = match kind {
        "jitclass" => ClassKind::JitClass,
        "structref" => ClassKind::StructRef,
        _ => return None,
    };
    let classes = CLASSES.read().unwrap_or_else(|e| e.into_inner());
    let mut found = None;
    for (id, c) in classes.iter().enumerate() {
        if c.kind != kind || c.key != key {
            continue;
        }
        let shown: Vec<String> = c.fields.iter().map(|(n, f)| format!("{n}:{f}")).collect();
        if shown.join(",") != fields {
            continue;
        }
        if found.is_some() {
            return None; // ambiguous
        }
        found = Some((id as u32, c.name.clone()));
    }
    drop(classes);
    let (id, name) = found?;
    Some(intern(Type::ClassInstance {
        id,
        name: format!("{name}#{id}"),
    }))
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
