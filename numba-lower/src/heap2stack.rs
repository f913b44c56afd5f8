//! Heap-to-stack promotion of `NRT_Allocate` blocks that never escape their function.
//!
//! A generator consumed where it was made (`for x in gen(...)`) has its init, `next`
//! and finalizer inlined into the consumer (`impls::generators`); its object is then a
//! small block allocated, read and written, and freed in one function. LLVM cannot keep
//! heap memory in registers, so such a block becomes a stack slot (when it is only
//! addressed by loads, stores, GEPs, comparisons, memory intrinsics and its `NRT_Free`)
//! and the next optimisation run turns its fields into SSA values, as Numba's
//! stack-allocated generator structs are. A block allocated in a loop reuses one slot:
//! the previous iteration's block can no longer be reached once the pointer to it is
//! overwritten.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;
use inkwell::values::AsValueRef;

/// Largest block promoted (bytes).
const MAX_BYTES: u64 = 4096;

fn name_of(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: v is a valid value; the name pointer is valid for len bytes.
    unsafe {
        let p = LLVMGetValueName2(v, &mut len);
        if p.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
    }
}

/// The users of `v`.
fn users(v: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: walking the use list of a valid value.
    unsafe {
        let mut u = LLVMGetFirstUse(v);
        while !u.is_null() {
            out.push(LLVMGetUser(u));
            u = LLVMGetNextUse(u);
        }
    }
    out
}

/// Whether the block `root` points to stays inside the function; its `NRT_Free` calls.
fn contained(root: LLVMValueRef, free: LLVMValueRef) -> Option<Vec<LLVMValueRef>> {
    let mut frees = Vec::new();
    let mut work = vec![root];
    let mut seen = std::collections::HashSet::new();
    while let Some(v) = work.pop() {
        if !seen.insert(v as usize) {
            continue;
        }
        for user in users(v) {
            // SAFETY: user is an instruction using v.
            unsafe {
                if LLVMIsAInstruction(user).is_null() {
                    return None;
                }
                match LLVMGetInstructionOpcode(user) {
                    LLVMOpcode::LLVMGetElementPtr => {
                        if LLVMGetOperand(user, 0) != v {
                            return None;
                        }
                        work.push(user);
                    }
                    LLVMOpcode::LLVMLoad | LLVMOpcode::LLVMICmp => {}
                    LLVMOpcode::LLVMStore => {
                        // Storing the pointer itself somewhere lets it escape.
                        if LLVMGetOperand(user, 0) == v {
                            return None;
                        }
                    }
                    LLVMOpcode::LLVMCall => {
                        let callee = LLVMGetCalledValue(user);
                        let n = LLVMGetNumArgOperands(user);
                        if callee == free && v == root && n == 1 {
                            frees.push(user);
                            continue;
                        }
                        let name = name_of(callee);
                        let intrinsic = name.starts_with("llvm.memset")
                            || name.starts_with("llvm.memcpy")
                            || name.starts_with("llvm.lifetime");
                        if !intrinsic {
                            return None;
                        }
                    }
                    _ => return None,
                }
            }
        }
    }
    Some(frees)
}

/// Promote every contained constant-size `NRT_Allocate` block of `module` to a stack
/// slot; the number promoted.
pub fn promote(module: &Module<'_>) -> usize {
    let Some(alloc) = module.get_function("NRT_Allocate") else {
        return 0;
    };
    let Some(free) = module.get_function("NRT_Free") else {
        return 0;
    };
    let (alloc, free) = (alloc.as_value_ref(), free.as_value_ref());
    let mut promoted = 0;
    for call in users(alloc) {
        // SAFETY: inspecting and rewriting instructions of a valid module; every handle
        // comes from its use lists and is used before being erased.
        unsafe {
            if LLVMIsACallInst(call).is_null() || LLVMGetCalledValue(call) != alloc {
                continue;
            }
            let size = LLVMGetOperand(call, 0);
            if LLVMIsAConstantInt(size).is_null() {
                continue;
            }
            let bytes = LLVMConstIntGetZExtValue(size);
            if bytes == 0 || bytes > MAX_BYTES {
                continue;
            }
            let Some(frees) = contained(call, free) else {
                continue;
            };
            let func = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
            let entry = LLVMGetEntryBasicBlock(func);
            let ctx = LLVMGetModuleContext(LLVMGetGlobalParent(func));
            let b = LLVMCreateBuilderInContext(ctx);
            let first = LLVMGetFirstInstruction(entry);
            if first.is_null() {
                LLVMPositionBuilderAtEnd(b, entry);
            } else {
                LLVMPositionBuilderBefore(b, first);
            }
            let ty = LLVMArrayType2(LLVMInt8TypeInContext(ctx), bytes);
            let slot = LLVMBuildAlloca(b, ty, c"gen.obj".as_ptr());
            // NRT_Allocate's blocks are 16-byte aligned.
            LLVMSetAlignment(slot, 16);
            LLVMDisposeBuilder(b);
            for f in frees {
                LLVMInstructionEraseFromParent(f);
            }
            LLVMReplaceAllUsesWith(call, slot);
            LLVMInstructionEraseFromParent(call);
            promoted += 1;
        }
    }
    promoted
}
