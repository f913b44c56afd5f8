//! The dispatcher's user-facing controls behind Numba's `Dispatcher` methods:
//! `disable_compile`, `compile` with an explicit signature, and `recompile`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use numba_lower::CompiledFunction;
use numba_typeinfer::TypeId;

use crate::{CompileError, Dispatcher};

/// Specialisations replaced by `recompile`. Code compiled earlier may still call them
/// (their native code is never freed), so the data they own (frozen global arrays) must
/// stay alive as long as the process.
static RETIRED: Mutex<Vec<Arc<CompiledFunction>>> = Mutex::new(Vec::new());

impl Dispatcher {
    /// Whether a call with new argument types may compile a new specialisation.
    pub fn can_compile(&self) -> bool {
        self.can_compile.load(Ordering::Relaxed)
    }

    /// Numba's `disable_compile(val)`: with `true`, calls only use (or convert to) the
    /// specialisations compiled so far.
    pub fn disable_compile(&self, disable: bool) {
        self.can_compile.store(!disable, Ordering::Relaxed);
    }

    /// Compile for an explicit signature now (Numba's `Dispatcher.compile(sig)`), without
    /// changing whether later calls may compile.
    pub fn compile_signature(
        &self,
        ret: Option<TypeId>,
        args: &[TypeId],
    ) -> Result<Arc<CompiledFunction>, CompileError> {
        let could = self.can_compile();
        let r = self.compile_explicit(ret, args);
        self.disable_compile(!could);
        r
    }

    /// Numba's `recompile()`: compile every existing signature again (the globals are read
    /// afresh). The new specialisations replace the old ones all at once, after every
    /// one compiled: calls made meanwhile (from other threads) keep using the old ones,
    /// and on an error nothing changes and the error is returned.
    pub fn recompile(&self) -> Result<(), CompileError> {
        let _one_at_a_time = self.recompiling.lock().unwrap_or_else(|e| e.into_inner());
        // The code read afresh may no longer ask for literal arguments.
        self.literal_requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let old = self.overloads();
        let mut new = Vec::with_capacity(old.len());
        for o in &old {
            new.push(Arc::new(self.build(&o.arg_types)?));
        }
        let mut overloads = self.overloads.lock().unwrap_or_else(|e| e.into_inner());
        // Signatures compiled by calls while this ran are kept.
        let added: Vec<_> = overloads
            .iter()
            .filter(|o| !old.iter().any(|x| Arc::ptr_eq(x, o)))
            .cloned()
            .collect();
        new.extend(added);
        let retired = std::mem::replace(&mut *overloads, new);
        self.publish(&overloads);
        let fresh = overloads.clone();
        drop(overloads);
        for c in &fresh {
            self.fill_slot(c);
        }
        RETIRED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(retired);
        Ok(())
    }
}
