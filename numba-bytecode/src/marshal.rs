//! A reader for CPython's `marshal` format (version 4, as 3.11 writes it) and for `.pyc` files.
//!
//! Every malformed input is an error, never a panic: lengths are checked against the remaining
//! bytes before anything is allocated, and nesting depth is capped like CPython's.

use crate::code::{CodeObject, Constant};
use crate::error::BytecodeError;

/// CPython's `MAX_MARSHAL_STACK_DEPTH`.
const MAX_DEPTH: usize = 2000;
const FLAG_REF: u8 = 0x80;

/// Read one code object from `marshal.dumps(code)` bytes.
pub fn read_code(data: &[u8]) -> Result<CodeObject, BytecodeError> {
    let mut r = Reader::new(data);
    match r.read_object(0)? {
        Constant::Code(code) => Ok(*code),
        other => Err(r.err(format!(
            "expected a code object, found {}",
            other.type_name()
        ))),
    }
}

/// Read any marshalled value.
pub fn read_object(data: &[u8]) -> Result<Constant, BytecodeError> {
    Reader::new(data).read_object(0)
}

/// Read the module code object of a `.pyc` file (16-byte header, then marshal data).
pub fn read_pyc(data: &[u8]) -> Result<CodeObject, BytecodeError> {
    if data.len() < 16 {
        return Err(BytecodeError::Marshal {
            offset: data.len(),
            reason: "a .pyc file has a 16-byte header".into(),
        });
    }
    read_code(&data[16..])
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Objects flagged with FLAG_REF, by index, with the work it took to build them; `None`
    /// while still being read.
    refs: Vec<Option<(Constant, usize)>>,
    /// Work done so far (objects built, counting copies made for references). References
    /// can nest so that a few bytes expand exponentially; past `limit` we stop.
    spent: usize,
    limit: usize,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Self {
        Reader {
            data,
            pos: 0,
            refs: Vec::new(),
            spent: 0,
            limit: data.len().saturating_mul(16).saturating_add(4096),
        }
    }

    fn charge(&mut self, work: usize) -> Result<(), BytecodeError> {
        self.spent = self.spent.saturating_add(work);
        if self.spent > self.limit {
            return Err(self.err("references expand the data beyond any real code object"));
        }
        Ok(())
    }

    fn err(&self, reason: impl Into<String>) -> BytecodeError {
        BytecodeError::Marshal {
            offset: self.pos,
            reason: reason.into(),
        }
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], BytecodeError> {
        if n > self.data.len() - self.pos {
            return Err(self.err(format!("needs {n} more bytes, data ends")));
        }
        self.charge(n / 16)?;
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, BytecodeError> {
        Ok(self.bytes(1)?[0])
    }

    fn i32(&mut self) -> Result<i32, BytecodeError> {
        let b = self.bytes(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn len(&mut self) -> Result<usize, BytecodeError> {
        let n = self.i32()?;
        usize::try_from(n).map_err(|_| self.err(format!("negative length {n}")))
    }

    fn f64(&mut self) -> Result<f64, BytecodeError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }

    fn float_text(&mut self) -> Result<f64, BytecodeError> {
        let n = self.u8()? as usize;
        let text = self.bytes(n)?;
        std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| self.err("bad float text"))
    }

    fn string(&mut self, n: usize, latin1: bool) -> Result<String, BytecodeError> {
        let b = self.bytes(n)?;
        if latin1 {
            Ok(b.iter().map(|&c| c as char).collect())
        } else {
            // CPython writes lone surrogates with "surrogatepass"; keep them lossy here.
            Ok(String::from_utf8_lossy(b).into_owned())
        }
    }

    fn items(&mut self, n: usize, depth: usize) -> Result<Vec<Constant>, BytecodeError> {
        // Each item takes at least one byte: refuse counts the data cannot hold.
        if n > self.data.len() - self.pos {
            return Err(self.err(format!("{n} items announced, data ends")));
        }
        (0..n).map(|_| self.read_object(depth + 1)).collect()
    }

    fn read_object(&mut self, depth: usize) -> Result<Constant, BytecodeError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.charge(1)?;
        let spent_before = self.spent;
        let code = self.u8()?;
        let flag = code & FLAG_REF != 0;
        let ty = code & !FLAG_REF;
        // Containers reserve their ref slot before their contents, as CPython does.
        let slot = if flag {
            self.refs.push(None);
            Some(self.refs.len() - 1)
        } else {
            None
        };
        let value = match ty {
            b'0' => return Err(self.err("NULL object")),
            b'N' => Constant::None,
            b'F' => Constant::Bool(false),
            b'T' => Constant::Bool(true),
            b'S' => Constant::StopIteration,
            b'.' => Constant::Ellipsis,
            b'i' => Constant::Int(i64::from(self.i32()?)),
            b'l' => self.long()?,
            b'g' => Constant::Float(self.f64()?),
            b'f' => Constant::Float(self.float_text()?),
            b'y' => {
                let re = self.f64()?;
                Constant::Complex(re, self.f64()?)
            }
            b'x' => {
                let re = self.float_text()?;
                Constant::Complex(re, self.float_text()?)
            }
            b's' => {
                let n = self.len()?;
                Constant::Bytes(self.bytes(n)?.to_vec())
            }
            b't' | b'u' => {
                let n = self.len()?;
                Constant::Str(self.string(n, false)?)
            }
            b'a' | b'A' => {
                let n = self.len()?;
                Constant::Str(self.string(n, true)?)
            }
            b'z' | b'Z' => {
                let n = self.u8()? as usize;
                Constant::Str(self.string(n, true)?)
            }
            b')' => {
                let n = self.u8()? as usize;
                Constant::Tuple(self.items(n, depth)?)
            }
            b'(' => {
                let n = self.len()?;
                Constant::Tuple(self.items(n, depth)?)
            }
            b'[' => {
                let n = self.len()?;
                Constant::List(self.items(n, depth)?)
            }
            b'<' => {
                let n = self.len()?;
                Constant::Set(self.items(n, depth)?)
            }
            b'>' => {
                let n = self.len()?;
                Constant::FrozenSet(self.items(n, depth)?)
            }
            b'{' => self.dict(depth)?,
            b'c' => Constant::Code(Box::new(self.code(depth)?)),
            b'r' => {
                let idx = self.i32()?;
                let found = usize::try_from(idx)
                    .ok()
                    .and_then(|i| self.refs.get(i))
                    .cloned()
                    .flatten();
                let (value, weight) =
                    found.ok_or_else(|| self.err(format!("bad reference {idx}")))?;
                self.charge(weight)?;
                return Ok(value);
            }
            other => return Err(self.err(format!("unknown type code {:?}", other as char))),
        };
        if let Some(slot) = slot {
            let weight = self.spent - spent_before + 1;
            self.refs[slot] = Some((value.clone(), weight));
        }
        Ok(value)
    }

    fn long(&mut self) -> Result<Constant, BytecodeError> {
        let n = self.i32()?;
        let negative = n < 0;
        let count = n.unsigned_abs() as usize;
        if count > (self.data.len() - self.pos) / 2 {
            return Err(self.err("long digits exceed data"));
        }
        let mut digits = Vec::with_capacity(count);
        for _ in 0..count {
            let b = self.bytes(2)?;
            let d = u16::from_le_bytes([b[0], b[1]]);
            if d >= 1 << 15 {
                return Err(self.err("long digit out of range"));
            }
            digits.push(d);
        }
        // Fits in i64 when the magnitude is below 2**63 (or equals it when negative).
        let mut mag: u128 = 0;
        let mut fits = digits.len() <= 5;
        if fits {
            for &d in digits.iter().rev() {
                mag = (mag << 15) | u128::from(d);
            }
            fits = if negative {
                mag <= 1u128 << 63
            } else {
                mag < 1u128 << 63
            };
        }
        if fits {
            let v = if negative {
                (mag as i128).wrapping_neg()
            } else {
                mag as i128
            };
            Ok(Constant::Int(v as i64))
        } else {
            Ok(Constant::BigInt { negative, digits })
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Constant, BytecodeError> {
        let mut items = Vec::new();
        loop {
            if self.data.get(self.pos) == Some(&b'0') {
                self.pos += 1;
                return Ok(Constant::Dict(items));
            }
            let k = self.read_object(depth + 1)?;
            let v = self.read_object(depth + 1)?;
            items.push((k, v));
        }
    }

    fn str_field(&mut self, depth: usize, what: &str) -> Result<String, BytecodeError> {
        match self.read_object(depth + 1)? {
            Constant::Str(s) => Ok(s),
            other => Err(self.err(format!("{what}: expected str, found {}", other.type_name()))),
        }
    }

    fn bytes_field(&mut self, depth: usize, what: &str) -> Result<Vec<u8>, BytecodeError> {
        match self.read_object(depth + 1)? {
            Constant::Bytes(b) => Ok(b),
            other => Err(self.err(format!(
                "{what}: expected bytes, found {}",
                other.type_name()
            ))),
        }
    }

    fn tuple_field(&mut self, depth: usize, what: &str) -> Result<Vec<Constant>, BytecodeError> {
        match self.read_object(depth + 1)? {
            Constant::Tuple(t) => Ok(t),
            other => Err(self.err(format!(
                "{what}: expected tuple, found {}",
                other.type_name()
            ))),
        }
    }

    fn names_field(&mut self, depth: usize, what: &str) -> Result<Vec<String>, BytecodeError> {
        self.tuple_field(depth, what)?
            .into_iter()
            .map(|c| match c {
                Constant::Str(s) => Ok(s),
                other => {
                    Err(self.err(format!("{what}: expected str, found {}", other.type_name())))
                }
            })
            .collect()
    }

    fn u32_field(&mut self, what: &str) -> Result<u32, BytecodeError> {
        let v = self.i32()?;
        u32::try_from(v).map_err(|_| self.err(format!("{what}: negative value {v}")))
    }

    fn code(&mut self, depth: usize) -> Result<CodeObject, BytecodeError> {
        let argcount = self.u32_field("co_argcount")?;
        let posonlyargcount = self.u32_field("co_posonlyargcount")?;
        let kwonlyargcount = self.u32_field("co_kwonlyargcount")?;
        let stacksize = self.u32_field("co_stacksize")?;
        let flags = self.u32_field("co_flags")?;
        let code = self.bytes_field(depth, "co_code")?;
        let consts = self.tuple_field(depth, "co_consts")?;
        let names = self.names_field(depth, "co_names")?;
        let localsplusnames = self.names_field(depth, "co_localsplusnames")?;
        let localspluskinds = self.bytes_field(depth, "co_localspluskinds")?;
        if localspluskinds.len() != localsplusnames.len() {
            return Err(self.err("co_localspluskinds and co_localsplusnames differ in length"));
        }
        let filename = self.str_field(depth, "co_filename")?;
        let name = self.str_field(depth, "co_name")?;
        let qualname = self.str_field(depth, "co_qualname")?;
        let firstlineno = self.u32_field("co_firstlineno")?;
        let linetable = self.bytes_field(depth, "co_linetable")?;
        let exceptiontable = self.bytes_field(depth, "co_exceptiontable")?;
        Ok(CodeObject {
            argcount,
            posonlyargcount,
            kwonlyargcount,
            stacksize,
            flags,
            code,
            consts,
            names,
            localsplusnames,
            localspluskinds,
            filename,
            name,
            qualname,
            firstlineno,
            linetable,
            exceptiontable,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars() {
        assert_eq!(read_object(b"N").unwrap(), Constant::None);
        assert_eq!(
            read_object(&[b'i', 0xff, 0xff, 0xff, 0xff]).unwrap(),
            Constant::Int(-1)
        );
        // marshal.dumps(2**63) == b'l\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08\x00'
        let big = [b'l', 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0];
        assert_eq!(read_object(&big).unwrap().py_repr(), "9223372036854775808");
        // marshal.dumps(-2**63) fits in i64
        let min = [b'l', 0xfb, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0];
        assert_eq!(read_object(&min).unwrap(), Constant::Int(i64::MIN));
        // marshal.dumps((1.5, 'ab')) with refs: ')\x02\xe9...' simplified by hand
        let tup = [
            b')', 2, b'g', 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, b'z', 2, b'a', b'b',
        ];
        assert_eq!(
            read_object(&tup).unwrap(),
            Constant::Tuple(vec![Constant::Float(1.5), Constant::Str("ab".into())])
        );
    }

    #[test]
    fn truncated_is_error() {
        assert!(read_object(b"").is_err());
        assert!(read_object(&[b'(', 0xff, 0xff, 0xff, 0x7f]).is_err());
        assert!(read_object(&[b'r', 0, 0, 0, 0]).is_err());
    }
}
