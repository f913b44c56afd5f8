//! Random IR, well-formed or not (ids out of range, missing blocks, misplaced
//! terminators), never makes the verifier panic; well-formed random straight-line IR passes.

use numba_bytecode::Constant;
use numba_ir::verify::verify;
use numba_ir::{BinOp, Block, Expr, ExprId, FunctionIR, Inst, Loc, Stmt, VarId};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn random_ir(rng: &mut Rng) -> FunctionIR {
    let mut ir = FunctionIR::default();
    let nvars = 1 + rng.below(8);
    for i in 0..nvars {
        let name = if rng.below(2) == 0 {
            format!("$t{i}")
        } else {
            format!("v{i}")
        };
        ir.add_var(name, Loc { line: 1 });
    }
    // Ids may point past the arenas on purpose.
    let var = |rng: &mut Rng| VarId(rng.below(nvars + 2) as u32);
    let nblocks = 1 + rng.below(5);
    for b in 0..nblocks {
        let mut body = Vec::new();
        for _ in 0..rng.below(6) {
            let stmt = match rng.below(8) {
                0 => Stmt::Jump {
                    target: (rng.below(nblocks + 1) * 2) as u32,
                },
                1 => Stmt::Branch {
                    cond: var(rng),
                    truebr: (rng.below(nblocks + 1) * 2) as u32,
                    falsebr: (rng.below(nblocks) * 2) as u32,
                },
                2 => Stmt::Return { value: var(rng) },
                3 => Stmt::Del { var: var(rng) },
                _ => {
                    let e = match rng.below(4) {
                        0 => Expr::Const(Constant::Int(rng.below(9) as i64)),
                        1 => Expr::Var(var(rng)),
                        2 => Expr::BinOp {
                            op: BinOp::Add,
                            lhs: var(rng),
                            rhs: var(rng),
                        },
                        _ => Expr::Phi {
                            incoming: vec![(Some(var(rng)), 0), (None, 2)],
                        },
                    };
                    let value = if rng.below(10) == 0 {
                        ExprId(10_000)
                    } else {
                        ir.add_expr(e)
                    };
                    Stmt::Assign {
                        target: var(rng),
                        value,
                    }
                }
            };
            body.push(Inst {
                stmt,
                loc: Loc { line: 1 },
            });
        }
        ir.blocks.insert((b * 2) as u32, Block { body });
    }
    ir
}

#[test]
fn random_ir_never_panics_the_verifier() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut ok = 0;
    for _ in 0..20_000 {
        let ir = random_ir(&mut rng);
        if verify(&ir).is_ok() {
            ok += 1;
        }
    }
    // Mostly broken IR, but the generator does hit valid shapes sometimes.
    assert!(ok < 20_000);
}

#[test]
fn well_formed_straight_line_ir_verifies() {
    let mut rng = Rng(42);
    for _ in 0..500 {
        let mut ir = FunctionIR::default();
        let mut defined: Vec<VarId> = Vec::new();
        let mut body = Vec::new();
        for i in 0..1 + rng.below(20) {
            let target = ir.add_var(format!("$t{i}"), Loc { line: 1 });
            let e = if defined.is_empty() || rng.below(3) == 0 {
                Expr::Const(Constant::Int(i as i64))
            } else {
                let a = defined[rng.below(defined.len() as u64) as usize];
                let b = defined[rng.below(defined.len() as u64) as usize];
                Expr::BinOp {
                    op: BinOp::Mul,
                    lhs: a,
                    rhs: b,
                }
            };
            let value = ir.add_expr(e);
            body.push(Inst {
                stmt: Stmt::Assign { target, value },
                loc: Loc { line: 1 },
            });
            defined.push(target);
        }
        body.push(Inst {
            stmt: Stmt::Return {
                value: *defined.last().unwrap(),
            },
            loc: Loc { line: 1 },
        });
        ir.blocks.insert(0, Block { body });
        verify(&ir).unwrap();
    }
}
