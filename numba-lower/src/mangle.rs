//! Symbol names, Itanium-style as Numba mangles them (`numba/core/itanium_mangler.py`):
//! the module and qualname as a nested name, an ABI tag with the dispatcher's unique id,
//! then the argument types. Functions of the same name in different modules, different
//! closures of one function, and different specialisations never collide.

use numba_typeinfer::TypeId;

/// `len + name`, with characters outside `[A-Za-z0-9_]` escaped as `_xx` (hex), as Numba's
/// `mangle_identifier` does.
fn ident(out: &mut String, name: &str) {
    let mut s = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            s.push(ch);
        } else {
            for byte in ch.to_string().bytes() {
                s.push_str(&format!("_{byte:02x}"));
            }
        }
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    out.push_str(&s.len().to_string());
    out.push_str(&s);
}

/// The symbol of the native function for `module.qualname` specialised on `args`.
pub fn mangle(module: &str, qualname: &str, uid: u64, args: &[TypeId]) -> String {
    let mut out = String::from("_ZN");
    for part in module.split('.').chain(qualname.split('.')) {
        ident(&mut out, part);
    }
    let tag = format!("v{uid}");
    out.push('B');
    out.push_str(&tag.len().to_string());
    out.push_str(&tag);
    out.push('E');
    if args.is_empty() {
        out.push('v');
    }
    for a in args {
        let name = a.to_string();
        // A jitted function's type prints by the function's name only: two lambdas
        // passed as arguments print alike, and their specialisations must not share a
        // symbol (a caller links both in). The type's code tells them apart.
        if name.contains("CPUDispatcher(") {
            ident(&mut out, &format!("{name}#{}", a.0));
        } else {
            ident(&mut out, &name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use numba_typeinfer::types::*;

    #[test]
    fn mangles_like_numba() {
        assert_eq!(
            mangle("__main__", "add", 1, &[INT64, INT64]),
            "_ZN8__main__3addB2v1E5int645int64"
        );
        assert_eq!(
            mangle("pkg.mod", "outer.<locals>.f", 12, &[]),
            "_ZN3pkg3mod5outer12_3clocals_3e1fB3v12Ev"
        );
        assert_ne!(
            mangle("a", "f", 1, &[FLOAT64]),
            mangle("b", "f", 1, &[FLOAT64])
        );
    }
}
