//! Overload selection: which compiled specialisation a call with given argument types runs
//! (seed 003, "polymorphic dispatch"; Numba's `TypeManager::selectOverload`).
//!
//! Each candidate signature is rated per argument by the implicit conversion from the
//! argument's type to the parameter's (exact, promote, safe, unsafe, or none, from
//! numba-typeinfer's table [`numba_typeinfer::conv::can_convert`]). A candidate is excluded
//! when an argument has no conversion, when one is unsafe and unsafe conversions are not
//! allowed, or when one is not exact and exact matches are required. The others are
//! ranked by their [`Rating`] — the counts of (unsafe, safe, promote) conversions compared
//! in that order, fewer being better — and the minimum wins. More than one candidate with
//! the best rating is an ambiguity.
//!
//! The dispatcher's policy is Numba's: while it may compile, only exact matches are
//! taken (a call with new types compiles a new specialisation; an ambiguity compiles
//! too); once explicit signatures disabled compiling, any conversion is allowed,
//! unsafe included, and no match or a tie is a `TypeError`.

use numba_typeinfer::{Conversion, TypeId};

/// What a candidate may need to convert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Whether unsafe conversions (e.g. float64 → int64) may be used.
    pub allow_unsafe: bool,
    /// Whether every argument must match exactly.
    pub exact_match_required: bool,
}

impl Policy {
    /// The dispatcher's policy: exact matches only while it may compile, everything
    /// (unsafe included) once compiling is disabled.
    pub fn for_dispatcher(can_compile: bool) -> Self {
        Policy {
            allow_unsafe: !can_compile,
            exact_match_required: can_compile,
        }
    }
}

/// How many conversions of each kind a candidate needs; compared as (unsafe, safe,
/// promote), fewer being better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rating {
    pub unsafe_convert: u32,
    pub safe_convert: u32,
    pub promote: u32,
}

impl Rating {
    fn key(self) -> (u32, u32, u32) {
        (self.unsafe_convert, self.safe_convert, self.promote)
    }
}

impl PartialOrd for Rating {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rating {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The outcome of [`select`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Exactly one best candidate: its index.
    Unique(usize),
    /// Several candidates share the best rating: their indices, in candidate order.
    Ambiguous(Vec<usize>),
    /// No candidate accepts the arguments.
    NoMatch,
}

/// Rate one candidate for these argument types under `policy`, converting with `conv`
/// (`None`: the candidate is excluded).
pub fn rate_with(
    args: &[TypeId],
    params: &[TypeId],
    policy: Policy,
    conv: impl Fn(TypeId, TypeId) -> Option<Conversion>,
) -> Option<Rating> {
    if args.len() != params.len() {
        return None;
    }
    let mut rating = Rating::default();
    for (&a, &p) in args.iter().zip(params) {
        match conv(a, p)? {
            Conversion::Exact => {}
            _ if policy.exact_match_required => return None,
            Conversion::Promote => rating.promote += 1,
            Conversion::Safe => rating.safe_convert += 1,
            Conversion::Unsafe if policy.allow_unsafe => rating.unsafe_convert += 1,
            Conversion::Unsafe => return None,
        }
    }
    Some(rating)
}

/// Select among `candidates` (each a parameter type list) for `args`, converting with
/// `conv` (tests pass synthetic tables; the dispatcher passes [`numba_typeinfer::conv::can_convert`]).
pub fn select_with<'a>(
    args: &[TypeId],
    candidates: impl IntoIterator<Item = &'a [TypeId]>,
    policy: Policy,
    conv: impl Fn(TypeId, TypeId) -> Option<Conversion>,
) -> Selection {
    let mut best: Option<Rating> = None;
    let mut tied: Vec<usize> = Vec::new();
    for (i, params) in candidates.into_iter().enumerate() {
        let Some(r) = rate_with(args, params, policy, &conv) else {
            continue;
        };
        match best {
            Some(b) if r > b => {}
            Some(b) if r == b => tied.push(i),
            _ => {
                best = Some(r);
                tied.clear();
                tied.push(i);
            }
        }
    }
    match tied.as_slice() {
        [] => Selection::NoMatch,
        [one] => Selection::Unique(*one),
        _ => Selection::Ambiguous(tied),
    }
}

/// [`select_with`] using numba-typeinfer's conversion table.
pub fn select<'a>(
    args: &[TypeId],
    candidates: impl IntoIterator<Item = &'a [TypeId]>,
    policy: Policy,
) -> Selection {
    select_with(args, candidates, policy, numba_typeinfer::conv::can_convert)
}

/// Types as Python prints a tuple of them: `(int64, float64)`, `(int64,)`, `()`.
pub fn tuple_text(types: &[TypeId]) -> String {
    match types {
        [one] => format!("({one},)"),
        _ => {
            let items: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            format!("({})", items.join(", "))
        }
    }
}

/// Numba's message for a tie: `Ambiguous overloading for <function> (<args>):` followed by
/// one line per tied signature (`(int32, int32) -> int32`).
///
/// `function` is how the function prints (Python's `repr`, `<function add at 0x...>`).
pub fn ambiguous_message(function: &str, args: &[TypeId], tied: &[(&[TypeId], TypeId)]) -> String {
    let mut msg = format!("Ambiguous overloading for {function} {}:", tuple_text(args));
    for (params, ret) in tied {
        msg.push('\n');
        msg.push_str(&format!("{} -> {ret}", tuple_text(params)));
    }
    msg
}

/// Numba's message when no signature accepts the arguments.
pub fn no_match_message(args: &[TypeId]) -> String {
    let a: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    format!(
        "No matching definition for argument type(s) {}",
        a.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // A synthetic typecode table: types 1..=4 stand for a small lattice where
    // 1 → 2 promotes, 1 → 3 is safe, 1 → 4 unsafe, 2 → 3 safe, 3 → 2 unsafe, and 4 converts
    // to nothing.
    const A: TypeId = TypeId(1);
    const B: TypeId = TypeId(2);
    const C: TypeId = TypeId(3);
    const D: TypeId = TypeId(4);

    fn table(from: TypeId, to: TypeId) -> Option<Conversion> {
        use Conversion::*;
        if from == to {
            return Some(Exact);
        }
        match (from.0, to.0) {
            (1, 2) => Some(Promote),
            (1, 3) => Some(Safe),
            (1, 4) => Some(Unsafe),
            (2, 3) => Some(Safe),
            (3, 2) => Some(Unsafe),
            _ => None,
        }
    }

    const CONVERTING: Policy = Policy {
        allow_unsafe: false,
        exact_match_required: false,
    };
    const UNSAFE_OK: Policy = Policy {
        allow_unsafe: true,
        exact_match_required: false,
    };

    fn sel(args: &[TypeId], cands: &[&[TypeId]], policy: Policy) -> Selection {
        select_with(args, cands.iter().copied(), policy, table)
    }

    #[test]
    fn exact_wins_over_conversions() {
        let cands: &[&[TypeId]] = &[&[B], &[C], &[A]];
        assert_eq!(sel(&[A], cands, CONVERTING), Selection::Unique(2));
        assert_eq!(sel(&[A], cands, UNSAFE_OK), Selection::Unique(2));
    }

    #[test]
    fn promote_beats_safe() {
        let cands: &[&[TypeId]] = &[&[C], &[B]];
        assert_eq!(sel(&[A], cands, CONVERTING), Selection::Unique(1));
        // Counts compare per kind: one safe loses to two promotes.
        let cands: &[&[TypeId]] = &[&[C, A], &[B, B]];
        assert_eq!(sel(&[A, A], cands, CONVERTING), Selection::Unique(1));
    }

    #[test]
    fn safe_beats_unsafe() {
        let cands: &[&[TypeId]] = &[&[D], &[C]];
        assert_eq!(sel(&[A], cands, UNSAFE_OK), Selection::Unique(1));
        // Two safe conversions still beat one unsafe.
        let cands: &[&[TypeId]] = &[&[D, A], &[C, C]];
        assert_eq!(sel(&[A, A], cands, UNSAFE_OK), Selection::Unique(1));
    }

    #[test]
    fn unsafe_only_when_allowed() {
        let cands: &[&[TypeId]] = &[&[D]];
        assert_eq!(sel(&[A], cands, CONVERTING), Selection::NoMatch);
        assert_eq!(sel(&[A], cands, UNSAFE_OK), Selection::Unique(0));
        // The dispatcher's policies: compiling allowed → exact only.
        assert_eq!(
            sel(&[A], cands, Policy::for_dispatcher(true)),
            Selection::NoMatch
        );
        assert_eq!(
            sel(&[A], cands, Policy::for_dispatcher(false)),
            Selection::Unique(0)
        );
        let promoting: &[&[TypeId]] = &[&[B]];
        assert_eq!(
            sel(&[A], promoting, Policy::for_dispatcher(true)),
            Selection::NoMatch
        );
        assert_eq!(
            sel(&[A], promoting, Policy::for_dispatcher(false)),
            Selection::Unique(0)
        );
    }

    #[test]
    fn missing_conversion_or_arity_excludes() {
        let cands: &[&[TypeId]] = &[&[A], &[A, A]];
        assert_eq!(sel(&[D], cands, UNSAFE_OK), Selection::NoMatch);
        assert_eq!(sel(&[A, A], cands, UNSAFE_OK), Selection::Unique(1));
    }

    #[test]
    fn ties_are_ambiguous_and_list_every_tied_candidate() {
        // (A, A) → (B, A) and → (A, B) each need one promotion and tie; (C, C) needs two
        // safe conversions and loses.
        let cands: &[&[TypeId]] = &[&[B, A], &[A, B], &[C, C]];
        assert_eq!(
            sel(&[A, A], cands, CONVERTING),
            Selection::Ambiguous(vec![0, 1])
        );
        let msg = ambiguous_message(
            "<function f>",
            &[numba_typeinfer::types::INT16, numba_typeinfer::types::INT16],
            &[
                (
                    &[numba_typeinfer::types::INT32, numba_typeinfer::types::INT64],
                    numba_typeinfer::types::INT64,
                ),
                (
                    &[numba_typeinfer::types::INT64, numba_typeinfer::types::INT32],
                    numba_typeinfer::types::INT64,
                ),
            ],
        );
        assert_eq!(
            msg,
            "Ambiguous overloading for <function f> (int16, int16):\n\
             (int32, int64) -> int64\n(int64, int32) -> int64"
        );
    }

    #[test]
    fn real_table_prefers_the_cheaper_signature() {
        use numba_typeinfer::types::{FLOAT64, INT32, INT64};
        let cands: &[&[TypeId]] = &[&[FLOAT64], &[INT64]];
        // int32 → int64 promotes, int32 → float64 is safe: int64 wins.
        assert_eq!(
            select(&[INT32], cands.iter().copied(), CONVERTING),
            Selection::Unique(1)
        );
        // float64 → int64 is unsafe: only with unsafe conversions allowed, and the
        // float64 signature matches exactly anyway.
        assert_eq!(
            select(&[FLOAT64], [&[INT64][..]], CONVERTING),
            Selection::NoMatch
        );
        assert_eq!(
            select(&[FLOAT64], [&[INT64][..]], UNSAFE_OK),
            Selection::Unique(0)
        );
    }

    #[test]
    fn messages_print_like_numba() {
        use numba_typeinfer::types::{FLOAT64, INT64};
        assert_eq!(
            no_match_message(&[INT64, FLOAT64]),
            "No matching definition for argument type(s) int64, float64"
        );
        assert_eq!(tuple_text(&[INT64]), "(int64,)");
        assert_eq!(tuple_text(&[]), "()");
    }
}
