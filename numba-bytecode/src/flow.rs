//! Symbolic stack execution (Numba's `byteflow.py`): splits the bytecode into blocks, names
//! every stack value with Numba's temporary names and threads stack values across blocks as
//! phi variables.
//!
//! Each traced instruction records the registers it reads ([`TracedInst::inputs`]) and the
//! ones it creates ([`TracedInst::outputs`]); the order per opcode is documented on
//! [`TracedInst`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::cfg::ControlFlowGraph;
use crate::error::BytecodeError;
use crate::instr::{ByteCode, Instruction};
use crate::opcode::BINARY_OP_SYMBOLS;

/// A register: a stack value named as Numba names it (`$8load_global.1`, `$phi60.0`).
pub type Reg = String;

/// One instruction with the registers it uses.
///
/// Operand order: binary ops `[lhs, rhs] -> [res]`; `CALL` `[func, args...] -> [res]` with
/// `kw_names`; `FOR_ITER` `[iterator] -> [pair, indval, pred]`; `RETURN_VALUE`
/// `[retval] -> [castval]`; `STORE_SUBSCR` `[target, index, value]`; `UNPACK_SEQUENCE`
/// `[iterable] -> [tuple, stores...]`; `BUILD_SLICE` `[start, stop, (step)] -> [slicevar, res]`;
/// `CALL_FUNCTION_EX` `[func, vararg, (varkwarg)] -> [res]`; `MAKE_FUNCTION`
/// `[code, closure?, annotations?, kwdefaults?, defaults?] -> [res]` (presence by flag bits);
/// every other op `[popped operands in stack order] -> [pushed result]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedInst {
    pub offset: u32,
    pub inputs: Vec<Reg>,
    pub outputs: Vec<Reg>,
    /// `co_consts` index of the pending `KW_NAMES`, for `CALL`.
    pub kw_names: Option<u32>,
}

/// An edge leaving a block with the stack it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowEdge {
    pub target: u32,
    pub stack: Vec<Reg>,
}

/// The dataflow of one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockFlow {
    pub offset: u32,
    /// Incoming stack slots (phi registers), bottom first.
    pub phis: Vec<Reg>,
    pub insts: Vec<TracedInst>,
    pub edges: Vec<FlowEdge>,
    /// After phi pruning: `(phi, value)` assignments to make before leaving the block.
    pub outgoing_phis: Vec<(Reg, Reg)>,
}

/// Dataflow of a whole function.
#[derive(Debug, Clone)]
pub struct Dataflow {
    pub blocks: BTreeMap<u32, BlockFlow>,
    pub cfg: ControlFlowGraph,
}

/// Whether a register holds the NULL that `PUSH_NULL`/`LOAD_GLOBAL` push.
pub fn is_null_reg(r: &str) -> bool {
    r.starts_with("$null$")
}

/// The `operator` function name Numba uses for a `BINARY_OP` symbol (`+` → `add`).
pub fn binop_operator_name(sym: &str) -> Option<&'static str> {
    Some(match sym {
        "+" => "add",
        "-" => "sub",
        "*" => "mul",
        "/" => "truediv",
        "//" => "floordiv",
        "%" => "mod",
        "**" => "pow",
        "<<" => "lshift",
        ">>" => "rshift",
        "&" => "and_",
        "|" => "or_",
        "^" => "xor",
        "@" => "matmul",
        "+=" => "iadd",
        "-=" => "isub",
        "*=" => "imul",
        "/=" => "itruediv",
        "//=" => "ifloordiv",
        "%=" => "imod",
        "**=" => "ipow",
        "<<=" => "ilshift",
        ">>=" => "irshift",
        "&=" => "iand",
        "|=" => "ior",
        "^=" => "ixor",
        "@=" => "imatmul",
        _ => return None,
    })
}

/// Opcodes Numba rejects on 3.11 (`Use of unsupported opcode (X) found`).
const REJECTED: &[&str] = &[
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
    "LOAD_CLASSDEREF",
    "MATCH_CLASS",
    "DICT_MERGE",
];

struct State<'a> {
    bc: &'a ByteCode,
    pc_initial: u32,
    pc: u32,
    stack: Vec<Reg>,
    ntemps: usize,
    phis: Vec<Reg>,
    insts: Vec<TracedInst>,
    edges: Vec<FlowEdge>,
    terminated: bool,
    kw_names: Option<u32>,
}

impl<'a> State<'a> {
    fn new(bc: &'a ByteCode, pc: u32, incoming: &[Reg]) -> Self {
        let mut s = State {
            bc,
            pc_initial: pc,
            pc,
            stack: Vec::new(),
            ntemps: 0,
            phis: Vec::new(),
            insts: Vec::new(),
            edges: Vec::new(),
            terminated: false,
            kw_names: None,
        };
        for r in incoming {
            let phi = if is_null_reg(r) {
                s.temp("null$")
            } else {
                s.temp("phi")
            };
            s.phis.push(phi.clone());
            s.stack.push(phi);
        }
        s
    }

    fn inst(&self) -> &'a Instruction {
        // pc always points at a decoded instruction: checked when it is set.
        self.bc
            .at(self.pc)
            .expect("state pc is an instruction offset")
    }

    fn temp(&mut self, prefix: &str) -> Reg {
        let k = self.ntemps;
        self.ntemps += 1;
        if prefix.is_empty() {
            let opname = self.bc.at(self.pc).map(|i| i.opname).unwrap_or("");
            format!("${}{}.{}", self.pc, opname.to_lowercase(), k)
        } else {
            format!("${}{}.{}", prefix, self.pc, k)
        }
    }

    fn err(&self, reason: &str) -> BytecodeError {
        BytecodeError::Decode {
            offset: self.pc.saturating_sub(2),
            reason: reason.into(),
        }
    }

    fn pop(&mut self) -> Result<Reg, BytecodeError> {
        self.stack.pop().ok_or_else(|| self.err("stack underflow"))
    }

    fn pop_n(&mut self, n: usize) -> Result<Vec<Reg>, BytecodeError> {
        if n > self.stack.len() {
            return Err(self.err("stack underflow"));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    fn peek(&self, n: usize) -> Result<Reg, BytecodeError> {
        if n == 0 || n > self.stack.len() {
            return Err(self.err("stack underflow"));
        }
        Ok(self.stack[self.stack.len() - n].clone())
    }

    fn record(&mut self, inputs: Vec<Reg>, outputs: Vec<Reg>) {
        self.insts.push(TracedInst {
            offset: self.pc,
            inputs,
            outputs,
            kw_names: None,
        });
    }

    fn fork(&mut self, target: u32, npop: usize) -> Result<(), BytecodeError> {
        if self.bc.at(target).is_none() {
            return Err(self.err("jump to a non-instruction offset"));
        }
        if npop > self.stack.len() {
            return Err(self.err("stack underflow"));
        }
        let stack = self.stack[..self.stack.len() - npop].to_vec();
        self.edges.push(FlowEdge { target, stack });
        self.terminated = true;
        Ok(())
    }

    fn unsupported(&self, message: String) -> BytecodeError {
        BytecodeError::Unsupported {
            message,
            line: self.inst().line,
        }
    }

    /// Trace one instruction.
    fn step(&mut self) -> Result<(), BytecodeError> {
        let inst = self.inst();
        let arg = inst.arg_or_zero();
        let name = inst.opname;
        match name {
            "NOP" | "RESUME" | "PRECALL" | "CACHE" | "COPY_FREE_VARS" | "MAKE_CELL" => {
                self.record(vec![], vec![])
            }
            "PUSH_NULL" => {
                let n = self.temp("null$");
                self.stack.push(n);
            }
            "LOAD_GLOBAL" => {
                let res = self.temp("");
                self.record(vec![], vec![res.clone()]);
                if arg & 1 != 0 {
                    let n = self.temp("null$");
                    self.stack.push(n);
                }
                self.stack.push(res);
            }
            "LOAD_FAST" => {
                let var = self
                    .bc
                    .code
                    .localsplus_name(arg)
                    .ok_or_else(|| self.err("LOAD_FAST index out of range"))?
                    .to_string();
                let res = self.temp(&var);
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_CONST" => {
                let res = format!("{}.{}", self.temp("const"), arg);
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_DEREF" | "LOAD_CLOSURE" => {
                let res = self.temp("");
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_ASSERTION_ERROR" => {
                let res = self.temp("assertion_error");
                self.record(vec![], vec![res.clone()]);
                self.stack.push(res);
            }
            "STORE_FAST" | "STORE_DEREF" => {
                let v = self.pop()?;
                self.record(vec![v], vec![]);
            }
            "DELETE_FAST" => self.record(vec![], vec![]),
            "LOAD_ATTR" => {
                let item = self.pop()?;
                let res = self.temp("");
                self.record(vec![item], vec![res.clone()]);
                self.stack.push(res);
            }
            "LOAD_METHOD" => {
                let item = self.pop()?;
                let null = self.temp("null$");
                self.stack.push(null);
                let res = self.temp("");
                self.record(vec![item], vec![res.clone()]);
                self.stack.push(res);
            }
            "STORE_ATTR" => {
                let target = self.pop()?;
                let value = self.pop()?;
                self.record(vec![target, value], vec![]);
            }
            "DELETE_ATTR" => {
                let target = self.pop()?;
                self.record(vec![target], vec![]);
            }
            "POP_TOP" => {
                self.pop()?;
            }
            "COPY" => {
                let v = self.peek(arg as usize)?;
                self.stack.push(v);
            }
            "SWAP" => {
                let n = arg as usize;
                let len = self.stack.len();
                if n == 0 || n > len {
                    return Err(self.err("stack underflow"));
                }
                self.stack.swap(len - 1, len - n);
            }
            "UNARY_POSITIVE" | "UNARY_NEGATIVE" | "UNARY_NOT" | "UNARY_INVERT" | "GET_ITER" => {
                let v = self.pop()?;
                let res = self.temp("");
                self.record(vec![v], vec![res.clone()]);
                self.stack.push(res);
            }
            "BINARY_OP" => {
                let sym = BINARY_OP_SYMBOLS
                    .get(arg as usize)
                    .ok_or_else(|| self.err("BINARY_OP argument out of range"))?;
                let opname = binop_operator_name(sym).unwrap_or("op");
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let res = self.temp(&format!("binop_{opname}"));
                self.record(vec![lhs, rhs], vec![res.clone()]);
                self.stack.push(res);
            }
            "COMPARE_OP" | "IS_OP" | "CONTAINS_OP" | "BINARY_SUBSCR" => {
                let rhs = self.pop()?;
                let lhs = self.pop()?;
                let res = self.temp("");
                self.record(vec![lhs, rhs], vec![res.clone()]);
                self.stack.push(res);
            }
            "STORE_SUBSCR" => {
                let index = self.pop()?;
                let target = self.pop()?;
                let value = self.pop()?;
                self.record(vec![target, index, value], vec![]);
            }
            "DELETE_SUBSCR" => {
                let index = self.pop()?;
                let target = self.pop()?;
                self.record(vec![target, index], vec![]);
            }
            "BUILD_TUPLE" | "BUILD_LIST" | "BUILD_SET" | "BUILD_STRING" => {
                let items = self.pop_n(arg as usize)?;
                let res = self.temp("");
                self.record(items, vec![res.clone()]);
                self.stack.push(res);
            }
            "LIST_TO_TUPLE" => {
                let v = self.pop()?;
                let res = self.temp("");
                self.record(vec![v], vec![res.clone()]);
                self.stack.push(res);
            }
            "BUILD_SLICE" => {
                let n = if arg == 3 { 3 } else { 2 };
                let items = self.pop_n(n)?;
                let slicevar = self.temp("");
                let res = self.temp("");
                self.record(items, vec![slicevar, res.clone()]);
                self.stack.push(res);
            }
            "FOR_ITER" => {
                let iterator = self.peek(1)?;
                let pair = self.temp("");
                let indval = self.temp("");
                let pred = self.temp("");
                self.record(vec![iterator], vec![pair, indval.clone(), pred]);
                self.stack.push(indval);
                let end = inst
                    .jump_target
                    .ok_or_else(|| self.err("FOR_ITER without target"))?;
                self.fork(end, 2)?;
                self.fork(inst.next, 0)?;
            }
            "RETURN_VALUE" => {
                let retval = self.pop()?;
                let castval = self.temp("");
                self.record(vec![retval], vec![castval]);
                self.terminated = true;
            }
            "RAISE_VARARGS" => {
                match arg {
                    0 => self.record(vec![], vec![]),
                    1 => {
                        let exc = self.pop()?;
                        self.record(vec![exc], vec![]);
                    }
                    _ => {
                        return Err(
                            self.unsupported("Multiple argument raise is not supported.".into())
                        )
                    }
                }
                self.terminated = true;
            }
            "POP_JUMP_FORWARD_IF_TRUE"
            | "POP_JUMP_FORWARD_IF_FALSE"
            | "POP_JUMP_BACKWARD_IF_TRUE"
            | "POP_JUMP_BACKWARD_IF_FALSE"
            | "POP_JUMP_FORWARD_IF_NONE"
            | "POP_JUMP_FORWARD_IF_NOT_NONE"
            | "POP_JUMP_BACKWARD_IF_NONE"
            | "POP_JUMP_BACKWARD_IF_NOT_NONE" => {
                let pred = self.pop()?;
                self.record(vec![pred], vec![]);
                let target = inst
                    .jump_target
                    .ok_or_else(|| self.err("jump without target"))?;
                self.fork(inst.next, 0)?;
                if target != inst.next {
                    self.fork(target, 0)?;
                }
            }
            "JUMP_IF_TRUE_OR_POP" | "JUMP_IF_FALSE_OR_POP" => {
                let pred = self.peek(1)?;
                self.record(vec![pred], vec![]);
                let target = inst
                    .jump_target
                    .ok_or_else(|| self.err("jump without target"))?;
                self.fork(inst.next, 1)?;
                self.fork(target, 0)?;
            }
            "JUMP_FORWARD" | "JUMP_BACKWARD" | "JUMP_BACKWARD_NO_INTERRUPT" => {
                self.record(vec![], vec![]);
                let target = inst
                    .jump_target
                    .ok_or_else(|| self.err("jump without target"))?;
                self.fork(target, 0)?;
            }
            "KW_NAMES" => {
                self.kw_names = Some(arg);
            }
            "CALL" => {
                let mut args = self.pop_n(arg as usize)?;
                let callable_or_first = self.pop()?;
                let null_or_callable = self.pop()?;
                let func = if is_null_reg(&null_or_callable) {
                    callable_or_first
                } else {
                    args.insert(0, callable_or_first);
                    null_or_callable
                };
                let res = self.temp("");
                let mut inputs = vec![func];
                inputs.extend(args);
                self.insts.push(TracedInst {
                    offset: self.pc,
                    inputs,
                    outputs: vec![res.clone()],
                    kw_names: self.kw_names.take(),
                });
                self.stack.push(res);
            }
            "CALL_FUNCTION_EX" => {
                let varkwarg = if arg & 1 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let vararg = self.pop()?;
                let func = self.pop()?;
                if self.stack.last().is_some_and(|r| is_null_reg(r)) {
                    self.pop()?;
                }
                let res = self.temp("");
                let mut inputs = vec![func, vararg];
                inputs.extend(varkwarg);
                self.record(inputs, vec![res.clone()]);
                self.stack.push(res);
            }
            "UNPACK_SEQUENCE" => {
                let iterable = self.pop()?;
                let stores: Vec<Reg> = (0..arg).map(|_| self.temp("")).collect();
                let tuple = self.temp("");
                let mut outputs = vec![tuple];
                outputs.extend(stores.iter().cloned());
                self.record(vec![iterable], outputs);
                self.stack.extend(stores.into_iter().rev());
            }
            "RETURN_GENERATOR" => {
                let t = self.temp("");
                self.stack.push(t);
            }
            "YIELD_VALUE" => {
                let v = self.pop()?;
                let res = self.temp("");
                self.record(vec![v], vec![res.clone()]);
                self.stack.push(res);
            }
            "MAKE_FUNCTION" => {
                let code = self.pop()?;
                let mut inputs = vec![code];
                for bit in [0x8, 0x4, 0x2, 0x1] {
                    if arg & bit != 0 {
                        inputs.push(self.pop()?);
                    }
                }
                let res = self.temp("");
                self.record(inputs, vec![res.clone()]);
                self.stack.push(res);
            }
            other if REJECTED.contains(&other) => {
                return Err(self.unsupported(format!("Use of unsupported opcode ({other}) found")));
            }
            other => {
                return Err(self.unsupported(format!(
                    "Use of unsupported opcode ({other}) found: numba-rs does not support it yet"
                )));
            }
        }
        Ok(())
    }

    fn starts_new_block(&self) -> bool {
        let inst = self.inst();
        self.bc.labels.contains(&inst.offset) || matches!(inst.opname, "FOR_ITER" | "BEFORE_WITH")
    }
}

/// Run the symbolic stack execution over a decoded function.
pub fn analyze(bc: &ByteCode) -> Result<Dataflow, BytecodeError> {
    if let Some(entry) = bc.exception_entries.first() {
        let line = bc
            .at(entry.start)
            .map(|i| i.line)
            .unwrap_or(bc.code.firstlineno);
        return Err(BytecodeError::Unsupported {
            message: "try/except, try/finally and with blocks are not supported by numba-rs yet"
                .into(),
            line,
        });
    }
    let mut finished: BTreeMap<u32, State> = BTreeMap::new();
    let mut pending: VecDeque<(u32, Vec<Reg>)> = VecDeque::from([(0, Vec::new())]);
    // Outgoing (phi, value) pairs per block, before pruning.
    let mut outgoing: BTreeMap<u32, Vec<(Reg, Reg)>> = BTreeMap::new();
    while let Some((pc, incoming)) = pending.pop_front() {
        if let Some(done) = finished.get(&pc) {
            if done.phis.len() != incoming.len() {
                return Err(BytecodeError::Decode {
                    offset: pc.saturating_sub(2),
                    reason: "block reached with different stack depths".into(),
                });
            }
            continue;
        }
        let mut state = State::new(bc, pc, &incoming);
        loop {
            state.step()?;
            if state.terminated {
                break;
            }
            let next = state.inst().next;
            if bc.at(next).is_none() {
                return Err(state.err("execution falls off the end of the code"));
            }
            state.pc = next;
            if state.starts_new_block() {
                state.fork(next, 0)?;
                break;
            }
        }
        for edge in &state.edges {
            // The successor's phis are named from its offset and slot, so they can be
            // mapped before it is traced.
            let succ = State::new(bc, edge.target, &edge.stack);
            let out = outgoing.entry(pc).or_default();
            for (phi, value) in succ.phis.iter().zip(&edge.stack) {
                out.push((phi.clone(), value.clone()));
            }
            pending.push_back((edge.target, edge.stack.clone()));
        }
        finished.insert(pc, state);
    }
    let pruned = prune_phis(&finished, &outgoing);
    let cfg = ControlFlowGraph::new(
        0,
        finished.keys().copied(),
        finished
            .values()
            .flat_map(|s| s.edges.iter().map(move |e| (s.pc_initial, e.target))),
    );
    let blocks = finished
        .into_iter()
        .filter(|(pc, _)| cfg.nodes.contains(pc))
        .map(|(pc, s)| {
            let outgoing_phis = pruned.get(&pc).cloned().unwrap_or_default();
            (
                pc,
                BlockFlow {
                    offset: pc,
                    phis: s.phis,
                    insts: s.insts,
                    edges: s.edges,
                    outgoing_phis,
                },
            )
        })
        .collect();
    Ok(Dataflow { blocks, cfg })
}

/// Numba's `_prune_phis`: keep the phis used in their block and resolve chains of phis to
/// the values that define them.
fn prune_phis(
    states: &BTreeMap<u32, State>,
    outgoing: &BTreeMap<u32, Vec<(Reg, Reg)>>,
) -> BTreeMap<u32, Vec<(Reg, Reg)>> {
    let phi_set: BTreeSet<&Reg> = states.values().flat_map(|s| s.phis.iter()).collect();
    let mut used: BTreeSet<Reg> = BTreeSet::new();
    for s in states.values() {
        let regs: BTreeSet<&Reg> = s
            .insts
            .iter()
            .flat_map(|i| i.inputs.iter().chain(&i.outputs))
            .collect();
        used.extend(s.phis.iter().filter(|p| regs.contains(p)).cloned());
    }
    // phi -> {(value, defining block)}
    let mut phismap: BTreeMap<Reg, BTreeSet<(Reg, u32)>> = BTreeMap::new();
    for (&pc, outs) in outgoing {
        for (phi, value) in outs {
            phismap
                .entry(phi.clone())
                .or_default()
                .insert((value.clone(), pc));
        }
    }
    let mut blacklist: BTreeMap<Reg, BTreeSet<(Reg, u32)>> = BTreeMap::new();
    loop {
        let mut changing = false;
        let phis: Vec<Reg> = phismap.keys().cloned().collect();
        for phi in phis {
            let defsites: Vec<(Reg, u32)> = phismap[&phi].iter().cloned().collect();
            let mut add = BTreeSet::new();
            for (rhs, pc) in defsites {
                if phi_set.contains(&rhs) {
                    add.extend(phismap.get(&rhs).cloned().unwrap_or_default());
                    blacklist.entry(phi.clone()).or_default().insert((rhs, pc));
                }
            }
            let entry = phismap.entry(phi.clone()).or_default();
            let before = entry.len();
            entry.extend(add);
            let to_remove = blacklist.get(&phi).cloned().unwrap_or_default();
            if entry.len() != before || entry.iter().any(|d| to_remove.contains(d)) {
                entry.retain(|d| !to_remove.contains(d));
                changing = true;
            }
        }
        if !changing {
            break;
        }
    }
    let mut out: BTreeMap<u32, Vec<(Reg, Reg)>> = BTreeMap::new();
    for phi in &used {
        for (rhs, pc) in phismap.get(phi).into_iter().flatten() {
            out.entry(*pc).or_default().push((phi.clone(), rhs.clone()));
        }
    }
    out
}
