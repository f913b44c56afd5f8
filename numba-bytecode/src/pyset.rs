//! An emulation of CPython 3.11's `set` table layout, and of `hash()` for the keys Numba's
//! CFG code puts in sets (small ints and `(int, int)` tuples).
//!
//! Numba prints its CFG analyses with `pprint`, and a set that fits on one line prints in
//! hash-table slot order, which depends on the insertion history. Replaying the same
//! insertions into this table reproduces that order (numba-facts §1.5). Only the layout is
//! emulated: keys are compared with `Eq`, hashes are supplied by the caller.

/// `LINEAR_PROBES` in `Objects/setobject.c`.
const LINEAR_PROBES: usize = 9;
/// `PERTURB_SHIFT` in `Objects/setobject.c`.
const PERTURB_SHIFT: u32 = 5;
/// `PySet_MINSIZE`.
const MIN_SIZE: usize = 8;

/// CPython's `hash()` of an `int` (modulo the Mersenne prime 2**61 - 1).
pub fn hash_int(v: i64) -> u64 {
    const MODULUS: i128 = (1 << 61) - 1;
    let m = i128::from(v).abs() % MODULUS;
    let h = if v < 0 { -m } else { m };
    let h = if h == -1 { -2 } else { h };
    h as i64 as u64
}

/// CPython 3.11's `hash()` of a tuple whose items have the given hashes (xxHash-based
/// `tuplehash`).
pub fn hash_tuple(items: &[u64]) -> u64 {
    const P1: u64 = 11_400_714_785_074_694_791;
    const P2: u64 = 14_029_467_366_897_019_727;
    const P5: u64 = 2_870_177_450_012_600_261;
    let mut acc = P5;
    for &lane in items {
        acc = acc.wrapping_add(lane.wrapping_mul(P2));
        acc = acc.rotate_left(31);
        acc = acc.wrapping_mul(P1);
    }
    acc = acc.wrapping_add((items.len() as u64) ^ (P5 ^ 3_527_539));
    if acc == u64::MAX {
        1_546_275_796
    } else {
        acc
    }
}

/// SipHash-1-3 as CPython 3.11 uses it for `str` and `bytes` (`Python/pyhash.c`).
fn siphash13(k0: u64, k1: u64, data: &[u8]) -> u64 {
    let mut v0 = k0 ^ 0x736f_6d65_7073_6575;
    let mut v1 = k1 ^ 0x646f_7261_6e64_6f6d;
    let mut v2 = k0 ^ 0x6c79_6765_6e65_7261;
    let mut v3 = k1 ^ 0x7465_6462_7974_6573;
    let round = |v0: &mut u64, v1: &mut u64, v2: &mut u64, v3: &mut u64| {
        *v0 = v0.wrapping_add(*v1);
        *v2 = v2.wrapping_add(*v3);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v1);
        *v0 = v0.wrapping_add(*v3);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.rotate_left(32);
    };
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let m = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
        v3 ^= m;
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        v0 ^= m;
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    let b = ((data.len() as u64) << 56) | u64::from_le_bytes(last);
    v3 ^= b;
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    v0 ^= b;
    v2 ^= 0xff;
    for _ in 0..3 {
        round(&mut v0, &mut v1, &mut v2, &mut v3);
    }
    (v0 ^ v1) ^ (v2 ^ v3)
}

/// `_Py_HashBytes` with hash randomisation off (`PYTHONHASHSEED=0`: a zero key). With a
/// random seed CPython's string hashes, and so the order of sets of strings, change on
/// every run; seed 0 is the one reproducible order.
pub fn hash_bytes(data: &[u8]) -> u64 {
    if data.is_empty() {
        return 0;
    }
    let h = siphash13(0, 0, data);
    if h == u64::MAX {
        (-2i64) as u64
    } else {
        h
    }
}

/// `hash(s)` for a `str` under `PYTHONHASHSEED=0`: the hash covers the string's compact
/// storage (1, 2 or 4 bytes per code point, as CPython picks the narrowest).
pub fn hash_str(s: &str) -> u64 {
    let max = s.chars().map(u32::from).max().unwrap_or(0);
    let data: Vec<u8> = if max < 0x100 {
        s.chars().map(|c| u32::from(c) as u8).collect()
    } else if max < 0x10000 {
        s.chars()
            .flat_map(|c| (u32::from(c) as u16).to_le_bytes())
            .collect()
    } else {
        s.chars().flat_map(|c| u32::from(c).to_le_bytes()).collect()
    };
    hash_bytes(&data)
}

#[derive(Debug, Clone)]
enum Slot<K> {
    Empty,
    Dummy,
    Active(K, u64),
}

/// A CPython set table: iteration yields keys in slot order, as `repr(set)` does.
#[derive(Debug, Clone)]
pub struct PySet<K> {
    table: Vec<Slot<K>>,
    fill: usize,
    used: usize,
}

impl<K: Clone + Eq> Default for PySet<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Clone + Eq> PySet<K> {
    /// `set()`.
    pub fn new() -> Self {
        PySet {
            table: vec![Slot::Empty; MIN_SIZE],
            fill: 0,
            used: 0,
        }
    }

    /// `set(iterable)` for an iterable that is not a set (a list, a generator).
    pub fn from_keys(keys: impl IntoIterator<Item = (K, u64)>) -> Self {
        let mut s = Self::new();
        for (k, h) in keys {
            s.add(k, h);
        }
        s
    }

    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Keys with their hashes in slot order.
    pub fn entries(&self) -> impl Iterator<Item = (&K, u64)> + '_ {
        self.table.iter().filter_map(|s| match s {
            Slot::Active(k, h) => Some((k, *h)),
            _ => None,
        })
    }

    /// Keys in slot order (the order `repr` and `for` use).
    pub fn iter(&self) -> impl Iterator<Item = &K> + '_ {
        self.entries().map(|(k, _)| k)
    }

    pub fn contains(&self, key: &K, hash: u64) -> bool {
        self.find(key, hash).is_some()
    }

    fn find(&self, key: &K, hash: u64) -> Option<usize> {
        let mask = self.mask();
        let mut i = (hash as usize) & mask;
        let mut perturb = hash;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for j in i..=i + probes {
                match &self.table[j] {
                    Slot::Empty => return None,
                    Slot::Active(k, h) if *h == hash && k == key => return Some(j),
                    _ => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i
                .wrapping_mul(5)
                .wrapping_add(1)
                .wrapping_add(perturb as usize))
                & mask;
        }
    }

    /// `set_add_entry`.
    pub fn add(&mut self, key: K, hash: u64) {
        let mask = self.mask();
        let mut i = (hash as usize) & mask;
        let mut perturb = hash;
        let mut freeslot = None;
        let slot = 'probe: loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for j in i..=i + probes {
                match &self.table[j] {
                    Slot::Empty => break 'probe j,
                    Slot::Active(k, h) if *h == hash && *k == key => return,
                    Slot::Dummy => {
                        freeslot.get_or_insert(j);
                    }
                    Slot::Active(..) => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i
                .wrapping_mul(5)
                .wrapping_add(1)
                .wrapping_add(perturb as usize))
                & mask;
        };
        if let Some(free) = freeslot {
            self.table[free] = Slot::Active(key, hash);
            self.used += 1;
            return;
        }
        self.table[slot] = Slot::Active(key, hash);
        self.fill += 1;
        self.used += 1;
        if self.fill * 5 >= mask * 3 {
            let minused = if self.used > 50_000 {
                self.used * 2
            } else {
                self.used * 4
            };
            self.resize(minused);
        }
    }

    /// `set_insert_clean`: insert a key known to be absent into a table without dummies.
    fn insert_clean(table: &mut [Slot<K>], key: K, hash: u64) {
        let mask = table.len() - 1;
        let mut i = (hash as usize) & mask;
        let mut perturb = hash;
        loop {
            if matches!(table[i], Slot::Empty) {
                table[i] = Slot::Active(key, hash);
                return;
            }
            if i + LINEAR_PROBES <= mask {
                if let Some(slot) = table[i + 1..=i + LINEAR_PROBES]
                    .iter_mut()
                    .find(|s| matches!(s, Slot::Empty))
                {
                    *slot = Slot::Active(key, hash);
                    return;
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i
                .wrapping_mul(5)
                .wrapping_add(1)
                .wrapping_add(perturb as usize))
                & mask;
        }
    }

    /// `set_table_resize`.
    fn resize(&mut self, minused: usize) {
        let mut newsize = MIN_SIZE;
        while newsize <= minused {
            newsize <<= 1;
        }
        let old = std::mem::replace(&mut self.table, vec![Slot::Empty; newsize]);
        self.fill = self.used;
        for slot in old {
            if let Slot::Active(k, h) = slot {
                Self::insert_clean(&mut self.table, k, h);
            }
        }
    }

    /// `set_merge`: `self.update(other)` where `other` is a set.
    pub fn update_from_set(&mut self, other: &PySet<K>) {
        if other.used == 0 {
            return;
        }
        if (self.fill + other.used) * 5 >= self.mask() * 3 {
            self.resize((self.used + other.used) * 2);
        }
        if self.fill == 0 && self.mask() == other.mask() && other.fill == other.used {
            self.table = other.table.clone();
            self.fill = other.fill;
            self.used = other.used;
            return;
        }
        if self.fill == 0 {
            self.fill = other.used;
            self.used = other.used;
            for (k, h) in other.entries() {
                Self::insert_clean(&mut self.table, k.clone(), h);
            }
            return;
        }
        for (k, h) in other.entries() {
            self.add(k.clone(), h);
        }
    }

    /// `set(other)` / `other.copy()` for a set.
    pub fn copy(&self) -> Self {
        let mut s = Self::new();
        s.update_from_set(self);
        s
    }

    /// `set.discard`: leaves a dummy slot, as CPython does.
    pub fn discard(&mut self, key: &K, hash: u64) {
        if let Some(j) = self.find(key, hash) {
            self.table[j] = Slot::Dummy;
            self.used -= 1;
        }
    }

    /// `self - other` (`set_difference`).
    pub fn difference(&self, other: &PySet<K>) -> Self {
        if (self.used >> 2) > other.used {
            let mut result = self.copy();
            for (k, h) in other.entries() {
                result.discard(k, h);
            }
            return result;
        }
        let mut result = Self::new();
        for (k, h) in self.entries() {
            if !other.contains(k, h) {
                result.add(k.clone(), h);
            }
        }
        result
    }
}

/// A set of small non-negative ints (block offsets), the common case.
pub type IntSet = PySet<i64>;

impl PySet<i64> {
    /// `set.add(v)` for an int.
    pub fn add_int(&mut self, v: i64) {
        self.add(v, hash_int(v));
    }

    pub fn contains_int(&self, v: i64) -> bool {
        self.contains(&v, hash_int(v))
    }

    pub fn discard_int(&mut self, v: i64) {
        self.discard(&v, hash_int(v));
    }

    /// `set([a, b, ...])`.
    pub fn from_ints(values: impl IntoIterator<Item = i64>) -> Self {
        Self::from_keys(values.into_iter().map(|v| (v, hash_int(v))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_hashes_match_cpython() {
        // hash(5) == 5, hash(-1) == -2, hash(2**61 - 1) == 0
        assert_eq!(hash_int(5), 5);
        assert_eq!(hash_int(-1) as i64, -2);
        assert_eq!(hash_int((1 << 61) - 1), 0);
    }

    #[test]
    fn tuple_hashes_match_cpython() {
        // Values printed by CPython 3.11: hash(()), hash((0, 0)), hash((60, 1)).
        assert_eq!(hash_tuple(&[]) as i64, 5_740_354_900_026_072_187);
        assert_eq!(hash_tuple(&[0, 0]) as i64, -8_458_139_203_682_520_985);
        assert_eq!(hash_tuple(&[60, 1]) as i64, 2_553_148_205_407_790_472);
    }

    #[test]
    fn string_hashes_match_cpython_with_hash_seed_zero() {
        // PYTHONHASHSEED=0 python3.11 -c "print(hash('a'), hash('__name__'), hash(''), hash('é'), hash('€'))"
        assert_eq!(hash_str("a") as i64, 4_644_417_185_603_328_019);
        assert_eq!(hash_str("__name__") as i64, 5_580_060_246_216_126_403);
        assert_eq!(hash_str(""), 0);
        assert_eq!(hash_str("é") as i64, 6_047_309_291_227_476_195);
        assert_eq!(hash_str("€") as i64, -5_529_981_157_763_016_009);
    }

    #[test]
    fn small_int_set_order_matches_cpython() {
        // Facts §1.5: {0, 60, 62} then 88 prints as {88, 0, 60, 62}.
        let mut d = IntSet::from_ints([88]);
        d.update_from_set(&IntSet::from_ints([0, 60, 62]));
        assert_eq!(d.iter().copied().collect::<Vec<_>>(), vec![88, 0, 60, 62]);
        let mut body = IntSet::from_ints([60]);
        for n in [118, 62, 88] {
            body.add_int(n);
        }
        assert_eq!(
            body.iter().copied().collect::<Vec<_>>(),
            vec![62, 88, 60, 118]
        );
    }

    #[test]
    fn growing_sets_match_cpython() {
        // (insertions, `list(s)` printed by CPython 3.11)
        let cases: [(&[i64], &[i64]); 3] = [
            (&[290, 390, 32, 130, 60], &[32, 290, 130, 390, 60]),
            (
                &[
                    388, 230, 240, 332, 194, 106, 48, 248, 14, 198, 220, 310, 390, 392, 0, 356,
                ],
                &[
                    0, 194, 388, 356, 230, 198, 390, 392, 106, 332, 14, 240, 48, 310, 248, 220,
                ],
            ),
            (
                &[
                    136, 368, 116, 302, 52, 162, 14, 10, 12, 332, 276, 4, 194, 350, 110,
                ],
                &[
                    162, 194, 4, 136, 10, 12, 332, 302, 14, 368, 110, 116, 52, 276, 350,
                ],
            ),
        ];
        for (ins, want) in cases {
            let mut s = IntSet::new();
            for &x in ins {
                s.add_int(x);
            }
            assert_eq!(s.iter().copied().collect::<Vec<_>>(), want);
        }
    }
}
