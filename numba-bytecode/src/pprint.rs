//! Just enough of CPython 3.11's `pprint` to print Numba's CFG analyses byte for byte:
//! ints, sets, lists, tuples, dicts with int keys, and opaque reprs, at width 80.
//!
//! `pprint` writes an object on one line when its `repr` fits the remaining width (sets then
//! appear in hash-table order), and otherwise breaks containers one item per line, sorting
//! dict keys and set items.

use std::fmt::Write;

/// A Python value as `pprint` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyObj {
    Int(i64),
    /// Items in iteration (slot) order.
    Set(Vec<i64>),
    List(Vec<PyObj>),
    Tuple(Vec<PyObj>),
    /// Entries in any order: both `repr` (as `_safe_repr`) and `pprint` sort them.
    Dict(Vec<(i64, PyObj)>),
    /// An object whose `repr` pprint never breaks (a namedtuple, say).
    Opaque(String),
}

const WIDTH: i64 = 80;

impl PyObj {
    /// `pprint`'s `_safe_repr` (dict keys sorted, everything else as `repr`).
    pub fn repr(&self) -> String {
        let mut s = String::new();
        self.write_repr(&mut s);
        s
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            PyObj::Int(v) => {
                let _ = write!(out, "{v}");
            }
            PyObj::Set(items) if items.is_empty() => out.push_str("set()"),
            PyObj::Set(items) => {
                out.push('{');
                join_ints(out, items);
                out.push('}');
            }
            PyObj::List(items) => {
                out.push('[');
                join(out, items.iter());
                out.push(']');
            }
            PyObj::Tuple(items) => {
                out.push('(');
                join(out, items.iter());
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            PyObj::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in sorted(entries).into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{k}: ");
                    v.write_repr(out);
                }
                out.push('}');
            }
            PyObj::Opaque(s) => out.push_str(s),
        }
    }
}

fn sorted(entries: &[(i64, PyObj)]) -> Vec<&(i64, PyObj)> {
    let mut v: Vec<_> = entries.iter().collect();
    v.sort_by_key(|(k, _)| *k);
    v
}

fn join_ints(out: &mut String, items: &[i64]) {
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{v}");
    }
}

fn join<'a>(out: &mut String, items: impl Iterator<Item = &'a PyObj>) {
    for (i, v) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        v.write_repr(out);
    }
}

/// `pprint.pformat(obj)`.
pub fn pformat(obj: &PyObj) -> String {
    let mut out = String::new();
    format(obj, &mut out, 0, 0);
    out
}

/// `PrettyPrinter._format`.
fn format(obj: &PyObj, out: &mut String, indent: i64, allowance: i64) {
    let rep = obj.repr();
    if rep.len() as i64 <= WIDTH - indent - allowance {
        out.push_str(&rep);
        return;
    }
    match obj {
        PyObj::Dict(entries) if !entries.is_empty() => {
            out.push('{');
            let items = sorted(entries);
            let indent = indent + 1;
            let last = items.len() - 1;
            for (i, (k, v)) in items.into_iter().enumerate() {
                let key = k.to_string();
                out.push_str(&key);
                out.push_str(": ");
                let allow = if i == last { allowance + 1 } else { 1 };
                format(v, out, indent + key.len() as i64 + 2, allow);
                if i != last {
                    out.push_str(",\n");
                    out.push_str(&" ".repeat(indent as usize));
                }
            }
            out.push('}');
        }
        PyObj::Set(items) if !items.is_empty() => {
            let mut sorted = items.clone();
            sorted.sort_unstable();
            let objs: Vec<PyObj> = sorted.into_iter().map(PyObj::Int).collect();
            out.push('{');
            format_items(&objs, out, indent, allowance + 1);
            out.push('}');
        }
        PyObj::List(items) => {
            out.push('[');
            format_items(items, out, indent, allowance + 1);
            out.push(']');
        }
        PyObj::Tuple(items) => {
            out.push('(');
            let end = if items.len() == 1 { 2 } else { 1 };
            format_items(items, out, indent, allowance + end);
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        _ => out.push_str(&rep),
    }
}

/// `PrettyPrinter._format_items` (non-compact).
fn format_items(items: &[PyObj], out: &mut String, indent: i64, allowance: i64) {
    let indent = indent + 1;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
            out.push_str(&" ".repeat(indent as usize));
        }
        let last = i + 1 == items.len();
        format(item, out, indent, if last { allowance } else { 1 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_dict_on_one_line_sets_in_slot_order() {
        let d = PyObj::Dict(vec![
            (60, PyObj::Set(vec![0, 60])),
            (0, PyObj::Set(vec![0])),
        ]);
        assert_eq!(pformat(&d), "{0: {0}, 60: {0, 60}}");
    }

    #[test]
    fn long_dict_breaks_per_item() {
        // pprint.pformat({i: set(range(0, 2*i, 2)) for i in range(0, 12, 2)}) in CPython 3.11
        let d = PyObj::Dict(
            (0..12)
                .step_by(2)
                .map(|i| (i, PyObj::Set((0..2 * i).step_by(2).collect())))
                .collect(),
        );
        let want = "{0: set(),\n 2: {0, 2},\n 4: {0, 2, 4, 6},\n 6: {0, 2, 4, 6, 8, 10},\n \
                    8: {0, 2, 4, 6, 8, 10, 12, 14},\n 10: {0, 2, 4, 6, 8, 10, 12, 14, 16, 18}}";
        assert_eq!(pformat(&d), want);
    }

    #[test]
    fn long_set_is_sorted_one_per_line() {
        let items: Vec<i64> = (0..30).rev().map(|i| i * 10).collect();
        let out = pformat(&PyObj::Set(items));
        assert!(out.starts_with("{0,\n 10,\n 20,"));
        assert!(out.ends_with(" 290}"));
    }
}
