//! Calls to numba-rs ufuncs (`@vectorize`, `@guvectorize` objects) from jitted code.
//!
//! The ufunc's driver chooses the loop (`CalleeResolver::resolve_ufunc`); this module
//! types the call around it as Numba does:
//! - vectorize: scalars give a scalar; any array gives a new C-ordered array of the
//!   broadcast rank; a trailing array argument is the output, written and returned.
//! - guvectorize: every input and output is passed, each with at least its core rank
//!   (a `()` input may be a scalar), and the call returns `None`.

use crate::context::UFuncLoop;
use crate::numpy::array_parts;
use crate::signature::{ImplKey, Signature};
use crate::types::{array, Type, TypeId, NONE};

/// The signature of calling the ufunc `func` (its type, for messages) with `args`, when
/// it runs `l`.
pub fn signature(func: TypeId, l: &UFuncLoop, args: &[TypeId]) -> Result<Signature, String> {
    let args: Vec<TypeId> = args.iter().map(|a| a.unliteral()).collect();
    let shown: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    let cannot = || format!("cannot call {func} with types ({})", shown.join(", "));
    let key = ImplKey::UFunc {
        kernel: l.kernel,
        args: l.args.clone(),
        ret: l.ret,
        nin: l.nin,
        core: l.core.clone(),
    };
    let n = args.len();
    match &l.core {
        None => {
            if n != l.nin && n != l.nin + l.nout {
                return Err(cannot());
            }
            if l.args.len() != l.nin {
                return Err(format!(
                    "{func}: the loop takes {} inputs, not {}",
                    l.args.len(),
                    l.nin
                ));
            }
            let mut sig_args = Vec::with_capacity(n);
            let mut rank = None;
            for (k, &t) in args.iter().take(l.nin).enumerate() {
                match array_parts(t) {
                    Some((_, nd, ..)) => {
                        rank = rank.max(Some(nd));
                        sig_args.push(t);
                    }
                    // A scalar is converted to the loop's type at the call.
                    None if t.is_scalar() => sig_args.push(l.args[k]),
                    None => return Err(cannot()),
                }
            }
            let ret = if n == l.nin {
                match rank {
                    Some(nd) => array(
                        l.ret,
                        nd,
                        crate::numpy::ufunc_layout(&args[..l.nin.min(args.len())]),
                    ),
                    None => l.ret,
                }
            } else {
                let out = args[n - 1];
                match out.get() {
                    Type::Array {
                        ndim,
                        readonly: false,
                        ..
                    } if Some(ndim) >= rank => {}
                    _ => return Err(cannot()),
                }
                sig_args.push(out);
                out
            };
            Ok(Signature {
                ret,
                args: sig_args,
                key,
            })
        }
        Some(core) => {
            if n != l.nin + l.nout || core.len() != n || l.args.len() != n {
                return Err(cannot());
            }
            let mut sig_args = Vec::with_capacity(n);
            for (k, &t) in args.iter().enumerate() {
                let (what, pos) = if k < l.nin {
                    ("Input", k)
                } else {
                    ("Output", k - l.nin)
                };
                match array_parts(t) {
                    Some((_, nd, _, readonly)) => {
                        if nd < core[k].len() as u32 {
                            return Err(format!(
                                "{what} operand {pos} does not have enough dimensions (has {nd}, \
                                 gufunc core requires {})",
                                core[k].len()
                            ));
                        }
                        if readonly && k >= l.nin {
                            return Err(cannot());
                        }
                        sig_args.push(t);
                    }
                    None if t.is_scalar()
                        && k < l.nin
                        && core[k].is_empty()
                        && l.args[k].is_scalar() =>
                    {
                        sig_args.push(l.args[k])
                    }
                    None => return Err(cannot()),
                }
            }
            Ok(Signature {
                ret: NONE,
                args: sig_args,
                key,
            })
        }
    }
}
