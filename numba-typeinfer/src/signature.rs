//! Resolved call signatures and explicit signature strings.

use std::fmt;

use numba_ir::{BinOp, UnaryOp};

use crate::types::{self, TypeId};

/// Which implementation a typed operation selects: the key of the lowering registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImplKey {
    BinOp(BinOp),
    Unary(UnaryOp),
    /// A function template by key (`abs`, `range`, `math.sqrt`, a user's key).
    Function(String),
    /// A call to another jitted function (or to the function being compiled).
    Dispatcher {
        id: u64,
    },
    /// Constructing an exception instance.
    Exception(String),
}

/// A resolved signature: argument types the operands are converted to, and the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    pub ret: TypeId,
    pub args: Vec<TypeId>,
    pub key: ImplKey,
}

impl fmt::Display for Signature {
    /// `(int64, float64) -> float64`, as Numba prints signatures (a Python tuple, so one
    /// argument is `(int64,)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(|a| a.to_string()).collect();
        let comma = if args.len() == 1 { "," } else { "" };
        write!(f, "({}{comma}) -> {}", args.join(", "), self.ret)
    }
}

/// Parse `"float64(float64, int64)"` (or `"(int64, int64)"` with no return type) into the
/// return type (if given) and the argument types.
pub fn parse_signature(text: &str) -> Result<(Option<TypeId>, Vec<TypeId>), String> {
    let text = text.trim();
    let open = text
        .find('(')
        .ok_or_else(|| format!("invalid signature {text:?}: expected 'ret(args)'"))?;
    let close = text
        .rfind(')')
        .filter(|&c| c > open && text[c + 1..].trim().is_empty())
        .ok_or_else(|| format!("invalid signature {text:?}: unbalanced parentheses"))?;
    let ret_name = text[..open].trim();
    let ret = if ret_name.is_empty() {
        None
    } else {
        Some(
            types::from_name(ret_name)
                .ok_or_else(|| format!("unknown type {ret_name:?} in signature"))?,
        )
    };
    let inner = text[open + 1..close].trim();
    let args = if inner.is_empty() {
        Vec::new()
    } else {
        inner
            .split(',')
            .enumerate()
            .filter(|(i, a)| !(a.trim().is_empty() && *i > 0))
            .map(|(_, a)| {
                let a = a.trim();
                types::from_name(a).ok_or_else(|| format!("unknown type {a:?} in signature"))
            })
            .collect::<Result<_, _>>()?
    };
    Ok((ret, args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    #[test]
    fn parses() {
        assert_eq!(
            parse_signature("float64(float64, int64)"),
            Ok((Some(FLOAT64), vec![FLOAT64, INT64]))
        );
        assert_eq!(parse_signature("(int64,)"), Ok((None, vec![INT64])));
        assert_eq!(parse_signature("void()"), Ok((Some(NONE), vec![])));
        assert!(parse_signature("float64(str)").is_err());
        assert!(parse_signature("float64").is_err());
    }
}
