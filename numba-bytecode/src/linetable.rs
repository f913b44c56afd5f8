//! The CPython 3.11 location table (`co_linetable`, PEP 657 format).

use crate::error::BytecodeError;

/// Source position of one code unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub line: Option<u32>,
    pub end_line: Option<u32>,
    pub col: Option<u32>,
    pub end_col: Option<u32>,
}

fn varint(data: &[u8], pos: &mut usize) -> Result<u32, BytecodeError> {
    let mut shift = 0u32;
    let mut val = 0u32;
    loop {
        let b = *data.get(*pos).ok_or_else(|| BytecodeError::Decode {
            offset: 0,
            reason: "truncated location table".into(),
        })?;
        *pos += 1;
        if shift < 32 {
            val |= u32::from(b & 63).checked_shl(shift).unwrap_or(0);
        }
        shift += 6;
        if b & 64 == 0 {
            return Ok(val);
        }
    }
}

fn svarint(data: &[u8], pos: &mut usize) -> Result<i64, BytecodeError> {
    let u = varint(data, pos)?;
    Ok(if u & 1 != 0 {
        -i64::from(u >> 1)
    } else {
        i64::from(u >> 1)
    })
}

/// Decode the location table into one [`Position`] per code unit (2 bytes of `co_code`).
pub fn parse(
    linetable: &[u8],
    firstlineno: u32,
    code_units: usize,
) -> Result<Vec<Position>, BytecodeError> {
    let mut out = Vec::with_capacity(code_units);
    let mut line = i64::from(firstlineno);
    let mut pos = 0;
    while pos < linetable.len() {
        let first = linetable[pos];
        pos += 1;
        if first & 0x80 == 0 {
            return Err(BytecodeError::Decode {
                offset: (out.len() * 2) as u32,
                reason: "location table entry without its start bit".into(),
            });
        }
        let code = (first >> 3) & 15;
        let length = usize::from(first & 7) + 1;
        let p = match code {
            15 => Position::default(),
            14 => {
                line += svarint(linetable, &mut pos)?;
                let end_line = line + i64::from(varint(linetable, &mut pos)?);
                let col = varint(linetable, &mut pos)?;
                let end_col = varint(linetable, &mut pos)?;
                Position {
                    line: u32::try_from(line).ok(),
                    end_line: u32::try_from(end_line).ok(),
                    col: col.checked_sub(1),
                    end_col: end_col.checked_sub(1),
                }
            }
            13 => {
                line += svarint(linetable, &mut pos)?;
                Position {
                    line: u32::try_from(line).ok(),
                    end_line: u32::try_from(line).ok(),
                    ..Position::default()
                }
            }
            10..=12 => {
                line += i64::from(code - 10);
                let col = *linetable.get(pos).unwrap_or(&0);
                let end_col = *linetable.get(pos + 1).unwrap_or(&0);
                pos += 2;
                Position {
                    line: u32::try_from(line).ok(),
                    end_line: u32::try_from(line).ok(),
                    col: Some(u32::from(col)),
                    end_col: Some(u32::from(end_col)),
                }
            }
            _ => {
                let second = *linetable.get(pos).unwrap_or(&0);
                pos += 1;
                let col = u32::from(code) * 8 + u32::from((second >> 4) & 7);
                Position {
                    line: u32::try_from(line).ok(),
                    end_line: u32::try_from(line).ok(),
                    col: Some(col),
                    end_col: Some(col + u32::from(second & 15)),
                }
            }
        };
        for _ in 0..length {
            out.push(p);
        }
    }
    out.resize(code_units.max(out.len()), Position::default());
    Ok(out)
}
