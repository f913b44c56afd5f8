//! Conversions and unification against Numba 0.68.1's own answers for every ordered pair
//! of 31 types (`tests/fixtures/oracle/types.*.tsv`, written by
//! `tests/fixtures/numba_types_oracle.py` from `typingctx.can_convert` / `unify_pairs`),
//! plus the properties the rules must have.

use std::fs;
use std::path::Path;

use numba_typeinfer::conv::{can_convert, unify, Conversion};
use numba_typeinfer::types::{parse_type, TypeId};

fn rows(file: &str) -> Vec<(TypeId, TypeId, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/oracle")
        .join(file);
    let text = fs::read_to_string(&path).unwrap();
    text.lines()
        .map(|l| {
            let mut it = l.split('\t');
            let (a, b, r) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
            let pa = parse_type(a).unwrap_or_else(|| panic!("cannot parse {a}"));
            let pb = parse_type(b).unwrap_or_else(|| panic!("cannot parse {b}"));
            (pa, pb, r.to_string())
        })
        .collect()
}

fn conv_name(c: Option<Conversion>) -> &'static str {
    match c {
        None => "none",
        Some(Conversion::Exact) => "exact",
        Some(Conversion::Promote) => "promote",
        Some(Conversion::Safe) => "safe",
        Some(Conversion::Unsafe) => "unsafe",
    }
}

#[test]
fn type_names_round_trip() {
    for (a, b, _) in rows("types.unify.tsv") {
        assert_eq!(parse_type(&a.to_string()), Some(a));
        assert_eq!(parse_type(&b.to_string()), Some(b));
    }
}

#[test]
fn conversions_match_numba() {
    let mut wrong = Vec::new();
    let all = rows("types.conversions.tsv");
    assert_eq!(all.len(), 31 * 31);
    for (a, b, want) in &all {
        let got = conv_name(can_convert(*a, *b));
        if got != want {
            wrong.push(format!("{a} -> {b}: ours {got}, Numba {want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn unification_matches_numba() {
    let mut wrong = Vec::new();
    for (a, b, want) in rows("types.unify.tsv") {
        let got = unify(a, b).map_or("none".to_string(), |t| t.to_string());
        if got != want {
            wrong.push(format!("unify({a}, {b}): ours {got}, Numba {want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn unify_is_symmetric() {
    let all = rows("types.unify.tsv");
    for (a, b, _) in &all {
        assert_eq!(unify(*a, *b), unify(*b, *a), "{a} {b}");
    }
}

/// The scalar table is closed under composition: if a → b and b → c, then a → c with a
/// conversion no better than the worse of the two steps (numba-facts §3.3).
#[test]
fn scalar_conversions_compose() {
    let all = rows("types.conversions.tsv");
    let scalars: Vec<TypeId> = all
        .iter()
        .map(|r| r.0)
        .filter(|t| t.is_scalar())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for &a in &scalars {
        for &b in &scalars {
            for &c in &scalars {
                if let (Some(x), Some(y)) = (can_convert(a, b), can_convert(b, c)) {
                    let direct = can_convert(a, c);
                    assert!(direct.is_some(), "{a} -> {b} -> {c} but not {a} -> {c}");
                    assert!(
                        direct.unwrap() <= x.max(y),
                        "{a} -> {c} is {:?}, worse than via {b} ({x:?}, {y:?})",
                        direct
                    );
                }
            }
        }
    }
}

#[test]
fn literal_ints_unify_with_int64() {
    use numba_typeinfer::types::{intern, Type, INT64};
    let lit = intern(Type::IntegerLiteral(0));
    assert_eq!(unify(lit, INT64), Some(INT64));
    assert_eq!(unify(INT64, lit), Some(INT64));
}
