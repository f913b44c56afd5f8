//! Opcode tables, one per CPython version, behind one interface.
//!
//! Each table is data: name, inline cache size and jump kind per opcode byte. CPython 3.11
//! ([`PY311`], taken from `dis.opmap` of 3.11.7) is the version numba-rs runs; later versions
//! are added as further tables.

use std::sync::LazyLock;

/// How an opcode's argument is a jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JumpKind {
    /// Not a jump.
    None,
    /// Relative forward jump: target = next + 2 * arg.
    Forward,
    /// Relative backward jump: target = next - 2 * arg.
    Backward,
}

/// What Numba does with an opcode on this CPython version (numba-facts §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumbaSupport {
    /// Traced and turned into IR.
    Traced,
    /// Traced for its stack effect only; it produces no IR.
    StackOnly,
    /// Rejected: `Use of unsupported opcode (X) found`.
    Rejected,
}

/// What is known about one opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub name: &'static str,
    /// Number of inline `CACHE` code units that follow the instruction.
    pub cache_entries: u8,
    pub jump: JumpKind,
    pub numba: NumbaSupport,
}

/// The opcode set of one CPython version.
#[derive(Debug)]
pub struct OpcodeTable {
    pub version: (u8, u8),
    /// Opcodes at or above this take an argument.
    pub have_argument: u8,
    pub extended_arg: u8,
    pub cache: u8,
    pub nop: u8,
    ops: [Option<OpcodeInfo>; 256],
}

impl OpcodeTable {
    /// Information about an opcode byte, `None` when the version does not define it.
    pub fn info(&self, op: u8) -> Option<&OpcodeInfo> {
        self.ops[op as usize].as_ref()
    }

    /// The opcode byte for a name.
    pub fn opcode(&self, name: &str) -> Option<u8> {
        self.ops
            .iter()
            .position(|o| o.map(|o| o.name) == Some(name))
            .map(|p| p as u8)
    }

    /// Every defined opcode, in byte order.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &OpcodeInfo)> {
        self.ops
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_ref().map(|o| (i as u8, o)))
    }
}

/// `(name, opcode, cache entries, jump kind)` for CPython 3.11.7.
const PY311_OPS: &[(&str, u8, u8, JumpKind)] = &[
    ("CACHE", 0, 0, JumpKind::None),
    ("POP_TOP", 1, 0, JumpKind::None),
    ("PUSH_NULL", 2, 0, JumpKind::None),
    ("NOP", 9, 0, JumpKind::None),
    ("UNARY_POSITIVE", 10, 0, JumpKind::None),
    ("UNARY_NEGATIVE", 11, 0, JumpKind::None),
    ("UNARY_NOT", 12, 0, JumpKind::None),
    ("UNARY_INVERT", 15, 0, JumpKind::None),
    ("BINARY_SUBSCR", 25, 4, JumpKind::None),
    ("GET_LEN", 30, 0, JumpKind::None),
    ("MATCH_MAPPING", 31, 0, JumpKind::None),
    ("MATCH_SEQUENCE", 32, 0, JumpKind::None),
    ("MATCH_KEYS", 33, 0, JumpKind::None),
    ("PUSH_EXC_INFO", 35, 0, JumpKind::None),
    ("CHECK_EXC_MATCH", 36, 0, JumpKind::None),
    ("CHECK_EG_MATCH", 37, 0, JumpKind::None),
    ("WITH_EXCEPT_START", 49, 0, JumpKind::None),
    ("GET_AITER", 50, 0, JumpKind::None),
    ("GET_ANEXT", 51, 0, JumpKind::None),
    ("BEFORE_ASYNC_WITH", 52, 0, JumpKind::None),
    ("BEFORE_WITH", 53, 0, JumpKind::None),
    ("END_ASYNC_FOR", 54, 0, JumpKind::None),
    ("STORE_SUBSCR", 60, 1, JumpKind::None),
    ("DELETE_SUBSCR", 61, 0, JumpKind::None),
    ("GET_ITER", 68, 0, JumpKind::None),
    ("GET_YIELD_FROM_ITER", 69, 0, JumpKind::None),
    ("PRINT_EXPR", 70, 0, JumpKind::None),
    ("LOAD_BUILD_CLASS", 71, 0, JumpKind::None),
    ("LOAD_ASSERTION_ERROR", 74, 0, JumpKind::None),
    ("RETURN_GENERATOR", 75, 0, JumpKind::None),
    ("LIST_TO_TUPLE", 82, 0, JumpKind::None),
    ("RETURN_VALUE", 83, 0, JumpKind::None),
    ("IMPORT_STAR", 84, 0, JumpKind::None),
    ("SETUP_ANNOTATIONS", 85, 0, JumpKind::None),
    ("YIELD_VALUE", 86, 0, JumpKind::None),
    ("ASYNC_GEN_WRAP", 87, 0, JumpKind::None),
    ("PREP_RERAISE_STAR", 88, 0, JumpKind::None),
    ("POP_EXCEPT", 89, 0, JumpKind::None),
    ("STORE_NAME", 90, 0, JumpKind::None),
    ("DELETE_NAME", 91, 0, JumpKind::None),
    ("UNPACK_SEQUENCE", 92, 1, JumpKind::None),
    ("FOR_ITER", 93, 0, JumpKind::Forward),
    ("UNPACK_EX", 94, 0, JumpKind::None),
    ("STORE_ATTR", 95, 4, JumpKind::None),
    ("DELETE_ATTR", 96, 0, JumpKind::None),
    ("STORE_GLOBAL", 97, 0, JumpKind::None),
    ("DELETE_GLOBAL", 98, 0, JumpKind::None),
    ("SWAP", 99, 0, JumpKind::None),
    ("LOAD_CONST", 100, 0, JumpKind::None),
    ("LOAD_NAME", 101, 0, JumpKind::None),
    ("BUILD_TUPLE", 102, 0, JumpKind::None),
    ("BUILD_LIST", 103, 0, JumpKind::None),
    ("BUILD_SET", 104, 0, JumpKind::None),
    ("BUILD_MAP", 105, 0, JumpKind::None),
    ("LOAD_ATTR", 106, 4, JumpKind::None),
    ("COMPARE_OP", 107, 2, JumpKind::None),
    ("IMPORT_NAME", 108, 0, JumpKind::None),
    ("IMPORT_FROM", 109, 0, JumpKind::None),
    ("JUMP_FORWARD", 110, 0, JumpKind::Forward),
    ("JUMP_IF_FALSE_OR_POP", 111, 0, JumpKind::Forward),
    ("JUMP_IF_TRUE_OR_POP", 112, 0, JumpKind::Forward),
    ("POP_JUMP_FORWARD_IF_FALSE", 114, 0, JumpKind::Forward),
    ("POP_JUMP_FORWARD_IF_TRUE", 115, 0, JumpKind::Forward),
    ("LOAD_GLOBAL", 116, 5, JumpKind::None),
    ("IS_OP", 117, 0, JumpKind::None),
    ("CONTAINS_OP", 118, 0, JumpKind::None),
    ("RERAISE", 119, 0, JumpKind::None),
    ("COPY", 120, 0, JumpKind::None),
    ("BINARY_OP", 122, 1, JumpKind::None),
    ("SEND", 123, 0, JumpKind::Forward),
    ("LOAD_FAST", 124, 0, JumpKind::None),
    ("STORE_FAST", 125, 0, JumpKind::None),
    ("DELETE_FAST", 126, 0, JumpKind::None),
    ("POP_JUMP_FORWARD_IF_NOT_NONE", 128, 0, JumpKind::Forward),
    ("POP_JUMP_FORWARD_IF_NONE", 129, 0, JumpKind::Forward),
    ("RAISE_VARARGS", 130, 0, JumpKind::None),
    ("GET_AWAITABLE", 131, 0, JumpKind::None),
    ("MAKE_FUNCTION", 132, 0, JumpKind::None),
    ("BUILD_SLICE", 133, 0, JumpKind::None),
    ("JUMP_BACKWARD_NO_INTERRUPT", 134, 0, JumpKind::Backward),
    ("MAKE_CELL", 135, 0, JumpKind::None),
    ("LOAD_CLOSURE", 136, 0, JumpKind::None),
    ("LOAD_DEREF", 137, 0, JumpKind::None),
    ("STORE_DEREF", 138, 0, JumpKind::None),
    ("DELETE_DEREF", 139, 0, JumpKind::None),
    ("JUMP_BACKWARD", 140, 0, JumpKind::Backward),
    ("CALL_FUNCTION_EX", 142, 0, JumpKind::None),
    ("EXTENDED_ARG", 144, 0, JumpKind::None),
    ("LIST_APPEND", 145, 0, JumpKind::None),
    ("SET_ADD", 146, 0, JumpKind::None),
    ("MAP_ADD", 147, 0, JumpKind::None),
    ("LOAD_CLASSDEREF", 148, 0, JumpKind::None),
    ("COPY_FREE_VARS", 149, 0, JumpKind::None),
    ("RESUME", 151, 0, JumpKind::None),
    ("MATCH_CLASS", 152, 0, JumpKind::None),
    ("FORMAT_VALUE", 155, 0, JumpKind::None),
    ("BUILD_CONST_KEY_MAP", 156, 0, JumpKind::None),
    ("BUILD_STRING", 157, 0, JumpKind::None),
    ("LOAD_METHOD", 160, 10, JumpKind::None),
    ("LIST_EXTEND", 162, 0, JumpKind::None),
    ("SET_UPDATE", 163, 0, JumpKind::None),
    ("DICT_MERGE", 164, 0, JumpKind::None),
    ("DICT_UPDATE", 165, 0, JumpKind::None),
    ("PRECALL", 166, 1, JumpKind::None),
    ("CALL", 171, 4, JumpKind::None),
    ("KW_NAMES", 172, 0, JumpKind::None),
    ("POP_JUMP_BACKWARD_IF_NOT_NONE", 173, 0, JumpKind::Backward),
    ("POP_JUMP_BACKWARD_IF_NONE", 174, 0, JumpKind::Backward),
    ("POP_JUMP_BACKWARD_IF_FALSE", 175, 0, JumpKind::Backward),
    ("POP_JUMP_BACKWARD_IF_TRUE", 176, 0, JumpKind::Backward),
];

/// Opcodes Numba 0.68 rejects on 3.11 (no `op_X` handler in its `TraceRunner`).
const PY311_REJECTED: &[&str] = &[
    "GET_LEN",
    "MATCH_MAPPING",
    "MATCH_SEQUENCE",
    "MATCH_KEYS",
    "CHECK_EG_MATCH",
    "GET_AITER",
    "GET_ANEXT",
    "BEFORE_ASYNC_WITH",
    "END_ASYNC_FOR",
    "GET_YIELD_FROM_ITER",
    "PRINT_EXPR",
    "LOAD_BUILD_CLASS",
    "IMPORT_STAR",
    "SETUP_ANNOTATIONS",
    "ASYNC_GEN_WRAP",
    "PREP_RERAISE_STAR",
    "STORE_NAME",
    "DELETE_NAME",
    "UNPACK_EX",
    "STORE_GLOBAL",
    "DELETE_GLOBAL",
    "LOAD_NAME",
    "IMPORT_NAME",
    "IMPORT_FROM",
    "SEND",
    "GET_AWAITABLE",
    "DELETE_DEREF",
    "EXTENDED_ARG",
    "LOAD_CLASSDEREF",
    "MATCH_CLASS",
    "DICT_MERGE",
];

/// Opcodes Numba traces on 3.11 for their stack effect only.
const PY311_STACK_ONLY: &[&str] = &[
    "POP_TOP",
    "PUSH_EXC_INFO",
    "WITH_EXCEPT_START",
    "POP_EXCEPT",
    "SWAP",
    "COPY",
    "KW_NAMES",
];

/// The CPython 3.11 opcode table.
pub static PY311: LazyLock<OpcodeTable> = LazyLock::new(|| {
    let mut ops = [None; 256];
    for &(name, op, cache_entries, jump) in PY311_OPS {
        let numba = if PY311_REJECTED.contains(&name) {
            NumbaSupport::Rejected
        } else if PY311_STACK_ONLY.contains(&name) {
            NumbaSupport::StackOnly
        } else {
            NumbaSupport::Traced
        };
        ops[op as usize] = Some(OpcodeInfo {
            name,
            cache_entries,
            jump,
            numba,
        });
    }
    OpcodeTable {
        version: (3, 11),
        have_argument: 90,
        extended_arg: 144,
        cache: 0,
        nop: 9,
        ops,
    }
});

/// `dis._nb_ops` of 3.11: the symbol of each `BINARY_OP` argument.
pub const BINARY_OP_SYMBOLS: [&str; 26] = [
    "+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^", "+=", "&=", "//=", "<<=",
    "@=", "*=", "%=", "|=", "**=", ">>=", "-=", "/=", "^=",
];

/// `dis.cmp_op`: the symbol of each `COMPARE_OP` argument.
pub const COMPARE_OP_SYMBOLS: [&str; 6] = ["<", "<=", "==", "!=", ">", ">="];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete() {
        assert_eq!(PY311.iter().count(), 110);
        assert_eq!(PY311.opcode("LOAD_GLOBAL"), Some(116));
        assert_eq!(PY311.info(116).map(|i| i.cache_entries), Some(5));
        assert_eq!(PY311.info(140).map(|i| i.jump), Some(JumpKind::Backward));
        // numba-facts §1.4: 72 traced to IR, 7 stack-only, 31 rejected.
        let count = |s| PY311.iter().filter(|(_, i)| i.numba == s).count();
        assert_eq!(count(NumbaSupport::Traced), 72);
        assert_eq!(count(NumbaSupport::StackOnly), 7);
        assert_eq!(count(NumbaSupport::Rejected), 31);
    }
}
