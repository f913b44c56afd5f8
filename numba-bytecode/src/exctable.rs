//! The CPython 3.11 exception table (`co_exceptiontable`).

use crate::error::BytecodeError;

/// One entry, offsets in CPython bytes (as `dis.Bytecode(code).exception_entries`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExceptionEntry {
    pub start: u32,
    pub end: u32,
    pub target: u32,
    pub depth: u32,
    pub lasti: bool,
}

fn varint(data: &[u8], pos: &mut usize) -> Result<u32, BytecodeError> {
    let err = || BytecodeError::Decode {
        offset: 0,
        reason: "truncated exception table".into(),
    };
    let mut b = *data.get(*pos).ok_or_else(err)?;
    *pos += 1;
    let mut val = u32::from(b & 63);
    while b & 64 != 0 {
        b = *data.get(*pos).ok_or_else(err)?;
        *pos += 1;
        val = val.checked_shl(6).ok_or_else(err)? | u32::from(b & 63);
    }
    Ok(val)
}

/// Decode every entry of an exception table.
pub fn parse(table: &[u8]) -> Result<Vec<ExceptionEntry>, BytecodeError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < table.len() {
        let start = varint(table, &mut pos)?.saturating_mul(2);
        let length = varint(table, &mut pos)?.saturating_mul(2);
        let target = varint(table, &mut pos)?.saturating_mul(2);
        let dl = varint(table, &mut pos)?;
        out.push(ExceptionEntry {
            start,
            end: start.saturating_add(length),
            target,
            depth: dl >> 1,
            lasti: dl & 1 != 0,
        });
    }
    Ok(out)
}
