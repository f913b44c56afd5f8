//! A `dis.dis` listing of a code object, text-identical to CPython 3.11's (default options:
//! no caches, no adaptive code, nested code objects disassembled after their parent).
//!
//! The only difference is the address in a code object's `repr` (`<code object f at 0x...`),
//! which is process-specific in CPython; we print `0x0`.
//!
//! This works from the raw code bytes rather than [`crate::ByteCode`], because `dis` and
//! Numba disagree on offsets (Numba shifts by 2) and on `CACHE` words (dis hides them).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::code::{CodeObject, Constant};
use crate::error::BytecodeError;
use crate::exctable;
use crate::linetable;
use crate::opcode::{JumpKind, OpcodeTable, BINARY_OP_SYMBOLS, COMPARE_OP_SYMBOLS, PY311};

/// `dis._OPNAME_WIDTH` and `dis._OPARG_WIDTH`.
const OPNAME_WIDTH: usize = 20;
const OPARG_WIDTH: usize = 5;

/// One instruction as `dis` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisInstruction {
    /// CPython offset (not shifted).
    pub offset: u32,
    pub opname: &'static str,
    pub arg: Option<u32>,
    pub argrepr: String,
    /// The line this instruction starts, if it starts one.
    pub starts_line: Option<u32>,
    pub is_jump_target: bool,
}

/// `dis.findlinestarts`: `(offset, line)` where the line changes.
pub fn line_starts(code: &CodeObject) -> Result<BTreeMap<u32, u32>, BytecodeError> {
    let units = code.code.len() / 2;
    let positions = linetable::parse(&code.linetable, code.firstlineno, units)?;
    let mut starts = BTreeMap::new();
    let mut last = None;
    for (unit, pos) in positions.iter().enumerate() {
        if let Some(line) = pos.line {
            if Some(line) != last {
                last = Some(line);
                starts.insert((unit * 2) as u32, line);
            }
        }
    }
    Ok(starts)
}

/// `dis._unpack_opargs` of 3.11: `(offset, opcode, arg)` skipping inline caches.
fn unpack(code: &[u8], table: &OpcodeTable) -> Result<Vec<(u32, u8, Option<u32>)>, BytecodeError> {
    let mut out = Vec::new();
    let mut extended: u32 = 0;
    let mut caches = 0usize;
    for i in (0..code.len() / 2).map(|u| u * 2) {
        if caches > 0 {
            caches -= 1;
            continue;
        }
        let op = code[i];
        let info = table.info(op).ok_or_else(|| BytecodeError::Decode {
            offset: i as u32,
            reason: format!("unknown opcode {op}"),
        })?;
        caches = usize::from(info.cache_entries);
        let arg = if op >= table.have_argument {
            let arg = u32::from(code[i + 1]) | extended;
            extended = if op == table.extended_arg {
                arg.wrapping_shl(8)
            } else {
                0
            };
            Some(arg)
        } else {
            extended = 0;
            None
        };
        out.push((i as u32, op, arg));
    }
    Ok(out)
}

/// The jump target `dis` computes for a relative jump at `offset`.
fn jump_target(offset: u32, arg: u32, jump: JumpKind, caches: u8) -> Option<i64> {
    let after = i64::from(offset) + 2 + 2 * i64::from(caches);
    match jump {
        JumpKind::None => None,
        JumpKind::Forward => Some(after + 2 * i64::from(arg)),
        JumpKind::Backward => Some(after - 2 * i64::from(arg)),
    }
}

fn name_at(list: &[String], idx: u32) -> Result<String, BytecodeError> {
    list.get(idx as usize)
        .cloned()
        .ok_or_else(|| BytecodeError::Decode {
            offset: 0,
            reason: format!("name index {idx} out of range"),
        })
}

/// The instructions of one code object as `dis.get_instructions` yields them.
pub fn instructions(code: &CodeObject) -> Result<Vec<DisInstruction>, BytecodeError> {
    instructions_with(code, &PY311)
}

/// [`instructions`] with an explicit opcode table.
pub fn instructions_with(
    code: &CodeObject,
    table: &OpcodeTable,
) -> Result<Vec<DisInstruction>, BytecodeError> {
    let raw = unpack(&code.code, table)?;
    let starts = line_starts(code)?;
    let mut labels: BTreeSet<i64> = BTreeSet::new();
    for &(offset, op, arg) in &raw {
        if let (Some(info), Some(arg)) = (table.info(op), arg) {
            labels.extend(jump_target(offset, arg, info.jump, info.cache_entries));
        }
    }
    for e in exctable::parse(&code.exceptiontable)? {
        if e.start < e.end {
            labels.insert(i64::from(e.target));
        }
    }
    let mut out = Vec::with_capacity(raw.len());
    for (offset, op, arg) in raw {
        let info = table.info(op).expect("unpack checked the opcode");
        let argrepr = match arg {
            None => String::new(),
            Some(arg) => argrepr(code, info.name, arg, offset, info)?,
        };
        out.push(DisInstruction {
            offset,
            opname: info.name,
            arg,
            argrepr,
            starts_line: starts.get(&offset).copied(),
            is_jump_target: labels.contains(&i64::from(offset)),
        });
    }
    Ok(out)
}

fn argrepr(
    code: &CodeObject,
    name: &str,
    arg: u32,
    offset: u32,
    info: &crate::opcode::OpcodeInfo,
) -> Result<String, BytecodeError> {
    let localsplus = &code.localsplusnames;
    Ok(match name {
        "LOAD_CONST" => code
            .consts
            .get(arg as usize)
            .map(Constant::py_repr)
            .ok_or_else(|| BytecodeError::Decode {
                offset,
                reason: format!("constant index {arg} out of range"),
            })?,
        "LOAD_GLOBAL" => {
            let n = name_at(&code.names, arg >> 1)?;
            if arg & 1 != 0 {
                format!("NULL + {n}")
            } else {
                n
            }
        }
        "STORE_NAME" | "DELETE_NAME" | "STORE_ATTR" | "DELETE_ATTR" | "STORE_GLOBAL"
        | "DELETE_GLOBAL" | "LOAD_NAME" | "LOAD_ATTR" | "IMPORT_NAME" | "IMPORT_FROM"
        | "LOAD_METHOD" => name_at(&code.names, arg)?,
        "LOAD_FAST" | "STORE_FAST" | "DELETE_FAST" | "MAKE_CELL" | "LOAD_CLOSURE"
        | "LOAD_DEREF" | "STORE_DEREF" | "DELETE_DEREF" | "LOAD_CLASSDEREF" => {
            name_at(localsplus, arg)?
        }
        "COMPARE_OP" => COMPARE_OP_SYMBOLS
            .get(arg as usize)
            .map(|s| s.to_string())
            .unwrap_or_default(),
        "BINARY_OP" => BINARY_OP_SYMBOLS
            .get(arg as usize)
            .map(|s| s.to_string())
            .unwrap_or_default(),
        "FORMAT_VALUE" => {
            let mut r = ["", "str", "repr", "ascii"][(arg & 3) as usize].to_string();
            if arg & 4 != 0 {
                if !r.is_empty() {
                    r.push_str(", ");
                }
                r.push_str("with format");
            }
            r
        }
        "MAKE_FUNCTION" => ["defaults", "kwdefaults", "annotations", "closure"]
            .iter()
            .enumerate()
            .filter(|(i, _)| arg & (1 << i) != 0)
            .map(|(_, s)| *s)
            .collect::<Vec<_>>()
            .join(", "),
        _ => match jump_target(offset, arg, info.jump, info.cache_entries) {
            Some(t) => format!("to {t}"),
            None => String::new(),
        },
    })
}

/// `dis.disassemble(code)`: one code object, without its nested ones.
pub fn disassemble(code: &CodeObject) -> Result<String, BytecodeError> {
    let insts = instructions(code)?;
    let starts = line_starts(code)?;
    let lineno_width = match starts.values().max() {
        None => 0,
        Some(&max) if max >= 1000 => max.to_string().len(),
        Some(_) => 3,
    };
    let maxoffset = code.code.len().saturating_sub(2);
    let offset_width = if maxoffset >= 10000 {
        maxoffset.to_string().len()
    } else {
        4
    };
    let mut out = String::new();
    for inst in &insts {
        if lineno_width > 0 && inst.starts_line.is_some() && inst.offset > 0 {
            out.push('\n');
        }
        let mut fields: Vec<String> = Vec::new();
        if lineno_width > 0 {
            fields.push(match inst.starts_line {
                Some(l) => format!("{l:>lineno_width$}"),
                None => " ".repeat(lineno_width),
            });
        }
        fields.push("   ".into());
        fields.push(if inst.is_jump_target { ">>" } else { "  " }.into());
        fields.push(format!("{:>offset_width$}", inst.offset));
        fields.push(format!("{:<OPNAME_WIDTH$}", inst.opname));
        if let Some(arg) = inst.arg {
            fields.push(format!("{arg:>OPARG_WIDTH$}"));
            if !inst.argrepr.is_empty() {
                fields.push(format!("({})", inst.argrepr));
            }
        }
        let line = fields.join(" ");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let entries = exctable::parse(&code.exceptiontable)?;
    if !entries.is_empty() {
        out.push_str("ExceptionTable:\n");
        for e in entries {
            let lasti = if e.lasti { " lasti" } else { "" };
            let _ = writeln!(
                out,
                "  {} to {} -> {} [{}]{}",
                e.start,
                i64::from(e.end) - 2,
                e.target,
                e.depth,
                lasti
            );
        }
    }
    Ok(out)
}

/// `dis.dis(code)`: the code object, then every nested code object (recursively), each
/// introduced by `Disassembly of <code object ...>:`.
pub fn dis(code: &CodeObject) -> Result<String, BytecodeError> {
    let mut out = disassemble(code)?;
    for c in &code.consts {
        if let Constant::Code(inner) = c {
            let _ = write!(out, "\nDisassembly of {}:\n", c.py_repr());
            out.push_str(&dis(inner)?);
        }
    }
    Ok(out)
}
