//! Instruction decoding with Numba's conventions.
//!
//! Numba injects a `NOP` at offset 0 and shifts every CPython offset by [`FIXED_OFFSET`], so
//! block 0 (where arguments are set up) is never a jump target. `EXTENDED_ARG` becomes a `NOP`
//! at its own offset (3.11 may jump to it) and inline `CACHE` words stay in the table, as
//! Numba's 3.11 decoder keeps them.

use std::collections::BTreeSet;
use std::fmt;

use crate::code::CodeObject;
use crate::error::BytecodeError;
use crate::exctable::{self, ExceptionEntry};
use crate::linetable::{self, Position};
use crate::opcode::{JumpKind, OpcodeTable, PY311};

/// Offset shift applied to every CPython offset (Numba's `_FIXED_OFFSET`).
pub const FIXED_OFFSET: u32 = 2;

/// One decoded instruction. Offsets are Numba's (CPython's + 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub offset: u32,
    pub next: u32,
    pub opcode: u8,
    pub opname: &'static str,
    pub arg: Option<u32>,
    pub line: u32,
    /// Jump target (Numba offset) for jump instructions.
    pub jump_target: Option<u32>,
    /// The 3.11 location table's entry: line, end line and columns (`None` where CPython
    /// records none, e.g. for the injected `NOP`).
    pub position: Position,
}

impl Instruction {
    /// The offset `dis` shows, or `None` for the injected NOP.
    pub fn cpython_offset(&self) -> Option<u32> {
        self.offset.checked_sub(FIXED_OFFSET)
    }

    pub fn is_jump(&self) -> bool {
        self.jump_target.is_some()
    }

    pub fn is_terminator(&self) -> bool {
        matches!(self.opname, "RETURN_VALUE" | "RAISE_VARARGS")
    }

    /// The argument, or 0 for opcodes without one.
    pub fn arg_or_zero(&self) -> u32 {
        self.arg.unwrap_or(0)
    }
}

impl fmt::Display for Instruction {
    /// Numba's `ByteCodeInst.__repr__`: `OPNAME(arg=X, lineno=N)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.arg {
            Some(a) => write!(f, "{}(arg={}, lineno={})", self.opname, a, self.line),
            None => write!(f, "{}(arg=None, lineno={})", self.opname, self.line),
        }
    }
}

/// A decoded code object: its instructions indexed by Numba offset, labels and exception
/// table.
#[derive(Debug, Clone)]
pub struct ByteCode {
    pub code: CodeObject,
    pub instructions: Vec<Instruction>,
    /// `(offset / 2) -> index into instructions`.
    by_unit: Vec<Option<usize>>,
    /// Jump targets and 0, as Numba offsets.
    pub labels: BTreeSet<u32>,
    /// Exception entries with Numba offsets.
    pub exception_entries: Vec<ExceptionEntry>,
    pub table: &'static OpcodeTable,
}

impl ByteCode {
    /// Decode a CPython 3.11 code object.
    pub fn decode(code: CodeObject) -> Result<ByteCode, BytecodeError> {
        Self::decode_with(code, &PY311)
    }

    /// Decode with an explicit opcode table.
    pub fn decode_with(
        code: CodeObject,
        table: &'static OpcodeTable,
    ) -> Result<ByteCode, BytecodeError> {
        let bytes = &code.code;
        if !bytes.len().is_multiple_of(2) {
            return Err(BytecodeError::Decode {
                offset: bytes.len() as u32,
                reason: "code length is odd".into(),
            });
        }
        let units = bytes.len() / 2;
        let positions = linetable::parse(&code.linetable, code.firstlineno, units)?;
        // Numba: lines from findlinestarts, inherited forward from co_firstlineno.
        let mut line = code.firstlineno;
        let nop = table.info(table.nop).map(|i| i.name).unwrap_or("NOP");
        let mut instructions = Vec::with_capacity(units + 1);
        instructions.push(Instruction {
            offset: 0,
            next: FIXED_OFFSET,
            opcode: table.nop,
            opname: nop,
            arg: None,
            line: positions.first().and_then(|p| p.line).unwrap_or(line),
            jump_target: None,
            position: Position::default(),
        });
        let mut extended: u32 = 0;
        for unit in 0..units {
            let op = bytes[unit * 2];
            let raw = u32::from(bytes[unit * 2 + 1]);
            let cpy_offset = (unit * 2) as u32;
            let offset = cpy_offset + FIXED_OFFSET;
            if let Some(l) = positions[unit].line {
                line = l;
            }
            let info = table.info(op).ok_or_else(|| BytecodeError::Decode {
                offset: cpy_offset,
                reason: format!("unknown opcode {op}"),
            })?;
            let mut inst = Instruction {
                offset,
                next: offset + 2,
                opcode: op,
                opname: info.name,
                arg: None,
                line,
                jump_target: None,
                position: positions[unit],
            };
            if op == table.extended_arg {
                extended = (extended | raw).checked_shl(8).unwrap_or(0);
                inst.opcode = table.nop;
                inst.opname = nop;
                inst.arg = Some(raw);
            } else if op >= table.have_argument {
                let arg = raw | extended;
                extended = 0;
                inst.arg = Some(arg);
                // Relative jumps count from the instruction after its caches.
                let after = cpy_offset + 2 + 2 * u32::from(info.cache_entries);
                let target = match info.jump {
                    JumpKind::None => None,
                    JumpKind::Forward => after.checked_add(arg.saturating_mul(2)),
                    JumpKind::Backward => after.checked_sub(arg.saturating_mul(2)),
                };
                if info.jump != JumpKind::None {
                    let t = target
                        .filter(|&t| (t as usize) < bytes.len())
                        .ok_or_else(|| BytecodeError::Decode {
                            offset: cpy_offset,
                            reason: format!("{} jumps outside the code", info.name),
                        })?;
                    inst.jump_target = Some(t + FIXED_OFFSET);
                }
            } else {
                extended = 0;
            }
            instructions.push(inst);
        }
        let mut by_unit = vec![None; units + 1];
        for (i, inst) in instructions.iter().enumerate() {
            by_unit[(inst.offset / 2) as usize] = Some(i);
        }
        let mut labels: BTreeSet<u32> = instructions.iter().filter_map(|i| i.jump_target).collect();
        labels.insert(0);
        let exception_entries = exctable::parse(&code.exceptiontable)?
            .into_iter()
            .map(|e| ExceptionEntry {
                start: e.start + FIXED_OFFSET,
                end: e.end + FIXED_OFFSET,
                target: e.target + FIXED_OFFSET,
                ..e
            })
            .collect();
        Ok(ByteCode {
            code,
            instructions,
            by_unit,
            labels,
            exception_entries,
            table,
        })
    }

    /// The instruction at a Numba offset.
    pub fn at(&self, offset: u32) -> Option<&Instruction> {
        self.by_unit
            .get((offset / 2) as usize)
            .copied()
            .flatten()
            .map(|i| &self.instructions[i])
    }

    /// The innermost exception-table entry covering `offset` (Numba's
    /// `find_exception_entry`: the greatest `(depth, entry)`).
    pub fn find_exception_entry(&self, offset: u32) -> Option<&ExceptionEntry> {
        self.exception_entries
            .iter()
            .filter(|e| e.start <= offset && offset < e.end)
            .max_by_key(|e| (e.depth, e.start, e.end, e.target, e.lasti))
    }

    /// Numba's `ByteCode.dump()`: one line per instruction except CACHE.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for inst in &self.instructions {
            if inst.opname == "CACHE" {
                continue;
            }
            let marker = if self.labels.contains(&inst.offset) {
                '>'
            } else {
                ' '
            };
            s.push_str(&format!("{marker} {:>10}\t{inst}\n", inst.offset));
        }
        s
    }
}
