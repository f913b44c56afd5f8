//! The process's one JIT session: an ORC LLJIT whose main library holds every compiled
//! module's code, as object files.
//!
//! Modules are compiled to object code here, with the thread's host target machine
//! (`codegen::host_machine`), and handed to the session's linker; cached object code
//! (`cache=True`) is handed over the same way without running LLVM. Symbols resolve in
//! one namespace: the runtime's functions and data (defined once, as absolute
//! addresses), the per-module externals the lowering names (object mode's C API table, a
//! callee's address), then the process's own symbols (libm, libmvec, the C library).
//! Numba keeps one MCJIT engine and links each library into it; one session replaces
//! the engine per module this crate used to make, with its target machine and symbol
//! mappings rebuilt on every compile.

use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, CString};
use std::sync::{Mutex, MutexGuard, OnceLock};

use inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcLLJITAddObjectFile,
    LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup,
    LLVMOrcLLJITMangleAndIntern, LLVMOrcLLJITRef,
};
use inkwell::llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCSymbolMapPair, LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess,
    LLVMOrcDisposeMaterializationUnit, LLVMOrcJITDylibAddGenerator, LLVMOrcJITDylibDefine,
    LLVMOrcJITDylibRef,
};
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};

use crate::{LowerError, R};

/// The session: the LLJIT, its main library and what this crate defined in it.
struct Session {
    jit: LLVMOrcLLJITRef,
    jd: LLVMOrcJITDylibRef,
    /// Absolute symbols defined so far, by name.
    absolute: HashMap<String, usize>,
    /// Names the loaded (or reserved) modules define.
    defined: HashSet<String>,
    /// Suffix counter for a module whose names clash with loaded code.
    renames: u64,
    /// How many of the embedder's host symbols are defined (its table only grows).
    host_defined: usize,
}

// SAFETY: the LLJIT and its JITDylib are thread-safe objects (ORC locks its own
// state); every use goes through the session's mutex anyway.
unsafe impl Send for Session {}

static SESSION: OnceLock<Result<Mutex<Session>, String>> = OnceLock::new();

fn take_error(err: LLVMErrorRef) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null error is consumed by LLVMGetErrorMessage; the message is
    // disposed after copying.
    unsafe {
        let msg = LLVMGetErrorMessage(err);
        let text = CStr::from_ptr(msg).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(msg);
        Err(text)
    }
}

fn session() -> R<MutexGuard<'static, Session>> {
    let s = SESSION
        .get_or_init(|| Session::create().map(Mutex::new))
        .as_ref()
        .map_err(|e| LowerError::Llvm(format!("cannot start the JIT: {e}")))?;
    Ok(s.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The runtime's symbols: what every module may name and the JIT maps by name.
fn runtime_tables() -> impl Iterator<Item = (&'static str, usize)> {
    numba_nrt::runtime_symbols()
        .into_iter()
        .chain(crate::runtime::symbols())
        .chain(crate::strings::symbols())
        .chain(crate::str_methods::symbols())
        .chain(crate::bytes::symbols())
        .chain(crate::str_format::symbols())
        .chain(crate::lists::symbols())
        .chain(crate::sets::symbols())
        .chain(crate::dicts::symbols())
        .chain(crate::random::symbols())
        .chain(crate::sort::symbols())
        .chain(crate::blas::symbols())
        .chain(crate::lapack::symbols())
}

impl Session {
    fn create() -> Result<Session, String> {
        crate::codegen::init_native().map_err(|e| e.to_string())?;
        let mut jit: LLVMOrcLLJITRef = std::ptr::null_mut();
        // SAFETY: the builder is consumed by LLVMOrcCreateLLJIT; the generator by the
        // JITDylib it is added to.
        unsafe {
            take_error(LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()))?;
            let jd = LLVMOrcLLJITGetMainJITDylib(jit);
            let mut generator = std::ptr::null_mut();
            take_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut generator,
                LLVMOrcLLJITGetGlobalPrefix(jit),
                None,
                std::ptr::null_mut(),
            ))?;
            LLVMOrcJITDylibAddGenerator(jd, generator);
            let mut s = Session {
                jit,
                jd,
                absolute: HashMap::new(),
                defined: HashSet::new(),
                renames: 0,
                host_defined: 0,
            };
            let table: Vec<(String, usize)> =
                runtime_tables().map(|(n, a)| (n.to_string(), a)).collect();
            s.define_absolute(&table).map_err(|e| e.to_string())?;
            Ok(s)
        }
    }

    /// Define the host symbols the embedder registered since the last call.
    fn define_host_symbols(&mut self) -> R<()> {
        let new: Vec<(String, usize)> = crate::runtime::host_symbols_from(self.host_defined)
            .into_iter()
            .map(|(n, a)| (n.to_string(), a))
            .collect();
        self.define_absolute(&new)?;
        self.host_defined += new.len();
        Ok(())
    }

    /// Define `symbols` (name, address) not defined yet; a name bound to another
    /// address is an error (two meanings for one name in one namespace).
    fn define_absolute(&mut self, symbols: &[(String, usize)]) -> R<()> {
        let mut pairs = Vec::new();
        for (name, addr) in symbols {
            match self.absolute.get(name) {
                Some(a) if a == addr => continue,
                Some(a) => {
                    return Err(LowerError::Llvm(format!(
                        "the JIT symbol {name} is bound to {a:#x} already, not {addr:#x}"
                    )))
                }
                None => {}
            }
            if pairs.iter().any(|(n, _): &(&String, usize)| *n == name) {
                continue;
            }
            // A name the process exports at this address (a C-API function a host's
            // box code names) comes from the process-symbol generator, which may have
            // defined it already for an earlier module: defining it again would clash.
            if process_address(name) == Some(*addr) {
                self.absolute.insert(name.clone(), *addr);
                continue;
            }
            pairs.push((name, *addr));
        }
        if pairs.is_empty() {
            return Ok(());
        }
        let mut c_pairs = Vec::with_capacity(pairs.len());
        for (name, addr) in &pairs {
            let c = CString::new(name.as_str())
                .map_err(|_| LowerError::Llvm(format!("a symbol name with NUL: {name}")))?;
            // SAFETY: the interned entry is retained for LLVMOrcAbsoluteSymbols, which
            // takes ownership of it.
            let entry = unsafe { LLVMOrcLLJITMangleAndIntern(self.jit, c.as_ptr()) };
            c_pairs.push(LLVMOrcCSymbolMapPair {
                Name: entry,
                Sym: LLVMJITEvaluatedSymbol {
                    Address: *addr as u64,
                    Flags: LLVMJITSymbolFlags {
                        GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported
                            as u8,
                        TargetFlags: 0,
                    },
                },
            });
        }
        // SAFETY: the pairs are valid; the unit is owned by the JITDylib on success and
        // disposed here on failure.
        unsafe {
            let mu = LLVMOrcAbsoluteSymbols(c_pairs.as_mut_ptr(), c_pairs.len());
            let err = LLVMOrcJITDylibDefine(self.jd, mu);
            if !err.is_null() {
                LLVMOrcDisposeMaterializationUnit(mu);
                return take_error(err).map_err(LowerError::Llvm);
            }
        }
        for (name, addr) in pairs {
            self.absolute.insert(name.clone(), addr);
        }
        Ok(())
    }

    fn add_object(&mut self, buf: MemoryBuffer) -> R<()> {
        let raw = buf.as_mut_ptr();
        // The session owns the buffer from here.
        std::mem::forget(buf);
        // SAFETY: `raw` is a valid buffer whose ownership passes to the linking layer.
        take_error(unsafe { LLVMOrcLLJITAddObjectFile(self.jit, self.jd, raw) })
            .map_err(LowerError::Llvm)
    }

    fn lookup(&self, name: &str) -> R<usize> {
        let c = CString::new(name)
            .map_err(|_| LowerError::Llvm(format!("a symbol name with NUL: {name}")))?;
        let mut addr = 0u64;
        // SAFETY: valid session and name; the address is written on success.
        take_error(unsafe { LLVMOrcLLJITLookup(self.jit, &mut addr, c.as_ptr()) })
            .map_err(|e| LowerError::Llvm(format!("{name}: {e}")))?;
        Ok(addr as usize)
    }
}

/// What a module defines for other code: its definitions that are not local.
pub(crate) fn exported_names(module: &Module<'_>) -> Vec<String> {
    let functions = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| (f.get_name().to_string_lossy().into_owned(), f.get_linkage()));
    let globals = module
        .get_globals()
        .filter(|g| g.get_initializer().is_some())
        .map(|g| (g.get_name().to_string_lossy().into_owned(), g.get_linkage()));
    functions
        .chain(globals)
        .filter(|(n, l)| {
            !n.starts_with("llvm.")
                && !matches!(l, Linkage::Internal | Linkage::Private | Linkage::Appending)
        })
        .map(|(n, _)| n)
        .collect()
}

/// Give a module's function or global `name` the name `new`.
pub(crate) fn rename(module: &Module<'_>, name: &str, new: &str) {
    if let Some(f) = module.get_function(name) {
        f.as_global_value().set_name(new);
    } else if let Some(g) = module.get_global(name) {
        g.set_name(new);
    }
}

/// The absolute symbols a module needs besides the runtime's: `externals`, callees
/// named by address (`numba_rs.callee.<id>.<hex address>`, also in modules linked in
/// from another function's library) and object mode's `with` helper.
fn module_imports(module: &Module<'_>, externals: &[(String, usize)]) -> R<Vec<(String, usize)>> {
    let mut out: Vec<(String, usize)> = externals.to_vec();
    for f in module.get_functions() {
        if f.count_basic_blocks() > 0 {
            continue;
        }
        let name = f.get_name().to_string_lossy();
        if let Some(rest) = name.strip_prefix("numba_rs.callee.") {
            if let Some(addr) = rest
                .rsplit('.')
                .next()
                .and_then(|h| usize::from_str_radix(h, 16).ok())
            {
                out.push((name.into_owned(), addr));
            }
        } else if name == crate::impls::objmode_with::HELPER
            && !externals
                .iter()
                .any(|(n, _)| n == crate::impls::objmode_with::HELPER)
        {
            let addr = crate::objmode::api::address(&name)?;
            out.push((name.into_owned(), addr));
        }
    }
    Ok(out)
}

/// A module handed to the session: how to find its symbols.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Names the module's definitions got in the session where they clashed with
    /// code loaded before (a function compiled twice under one symbol).
    renamed: HashMap<String, String>,
}

impl Loaded {
    /// The address of `name`, one of the module's definitions.
    pub fn address(&self, name: &str) -> R<usize> {
        let name = self.renamed.get(name).map_or(name, String::as_str);
        crate::codegen::timed("llvm.link", || session()?.lookup(name))
    }
}

/// Compile `module` (optimised) to object code for the host and load it into the
/// session, with `externals` (symbol, address) defined for it.
pub fn load_module(module: &Module<'_>, externals: &[(String, usize)]) -> R<Loaded> {
    let imports = module_imports(module, externals)?;
    let mut renamed = HashMap::new();
    {
        let mut s = session()?;
        s.define_host_symbols()?;
        s.define_absolute(&imports)?;
        // Reserve the module's names; one loaded before under the same name (the same
        // specialisation compiled again) makes this module's copy take a new name.
        for name in exported_names(module) {
            if s.defined.contains(&name) || s.absolute.contains_key(&name) {
                s.renames += 1;
                let new = format!("{name}.{}", s.renames);
                rename(module, &name, &new);
                s.defined.insert(new.clone());
                renamed.insert(name, new);
            } else {
                s.defined.insert(name);
            }
        }
    }
    let buf = emit_object(module)?;
    session()?.add_object(buf)?;
    Ok(Loaded { renamed })
}

/// The host's object code for `module`.
pub(crate) fn emit_object(module: &Module<'_>) -> R<MemoryBuffer<'static>> {
    let machine = crate::codegen::host_machine()?;
    crate::codegen::timed("llvm.codegen", || {
        machine.write_to_memory_buffer(module, inkwell::targets::FileType::Object)
    })
    .map_err(crate::llvm_err)
}

/// Load object code (made in this or another process) whose definitions are
/// `exports`, found under the names `names` maps them to; when they are loaded already
/// (the same code), nothing is added.
pub fn load_object(
    object: &[u8],
    exports: &[String],
    names: impl Iterator<Item = (String, String)>,
    name: &str,
) -> R<Loaded> {
    let loaded = Loaded {
        renamed: names.collect(),
    };
    let mut s = session()?;
    s.define_host_symbols()?;
    if exports.iter().all(|e| s.defined.contains(e)) {
        return Ok(loaded);
    }
    if let Some(clash) = exports.iter().find(|e| s.defined.contains(*e)) {
        return Err(LowerError::Llvm(format!(
            "cached code defines {clash}, which is loaded already"
        )));
    }
    s.add_object(MemoryBuffer::create_from_memory_range_copy(object, name))?;
    s.defined.extend(exports.iter().cloned());
    Ok(loaded)
}

static WARM_UP: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);

/// Start the session and run LLVM's optimiser and code generator once, on a thread of
/// its own, so that their one-time set-up (target and pass registries, the linker, the
/// session) is done by the time the first function compiles rather than during it. A
/// program that compiles right away waits only for what is left of it.
/// `first` runs on that thread before LLVM's part (the embedder's own one-time set-up).
pub fn warm_up_in_background(first: impl FnOnce() + Send + 'static) {
    let mut slot = WARM_UP.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_some() {
        return;
    }
    *slot = std::thread::Builder::new()
        .name("numba-rs-warm-up".into())
        .spawn(|| {
            lower_this_thread_priority();
            first();
            // Failures here surface again, with their message, at the first compile.
            let _ = warm_up();
            // The thread ends here: the first thread to compile takes its machine.
            crate::codegen::donate_host_machine();
        })
        .ok();
}

/// The warm-up yields the CPU to the program's own threads (it overlaps the rest of the
/// program's imports, which it must not slow).
fn lower_this_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn gettid() -> i32;
            fn setpriority(which: i32, who: u32, prio: i32) -> i32;
        }
        // SAFETY: plain system calls on this thread's own id (PRIO_PROCESS = 0 names a
        // thread by its id on Linux); a failure leaves the priority as it was.
        unsafe {
            setpriority(0, gettid() as u32, 19);
        }
    }
}

/// Wait for the warm-up thread, if one runs (before a fork: a child must not inherit
/// a session half made).
pub fn join_warm_up() {
    let handle = WARM_UP.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(h) = handle {
        let _ = h.join();
    }
}

fn warm_up() -> R<()> {
    use inkwell::IntPredicate;
    drop(session()?);
    let ctx = inkwell::context::Context::create();
    let machine = crate::codegen::host_machine()?;
    let module = crate::codegen::new_module(&ctx, "numba_rs.warm_up", machine);
    // double f(double* a, i64 n): a loop of float arithmetic, as kernels have.
    let f64t = ctx.f64_type();
    let i64t = ctx.i64_type();
    let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
    let f = module.add_function(
        "numba_rs.warm_up",
        f64t.fn_type(&[ptr.into(), i64t.into()], false),
        None,
    );
    let b = ctx.create_builder();
    let entry = ctx.append_basic_block(f, "entry");
    let body = ctx.append_basic_block(f, "body");
    let exit = ctx.append_basic_block(f, "exit");
    let err = crate::llvm_err;
    let a = f.get_nth_param(0).map(|p| p.into_pointer_value());
    let n = f.get_nth_param(1).map(|p| p.into_int_value());
    let (Some(a), Some(n)) = (a, n) else {
        return Ok(());
    };
    b.position_at_end(entry);
    let any = b
        .build_int_compare(IntPredicate::SGT, n, i64t.const_zero(), "any")
        .map_err(err)?;
    b.build_conditional_branch(any, body, exit).map_err(err)?;
    b.position_at_end(body);
    let i = b.build_phi(i64t, "i").map_err(err)?;
    let s = b.build_phi(f64t, "s").map_err(err)?;
    // SAFETY (of the IR): an in-bounds element of the caller's array.
    let p = unsafe { b.build_gep(f64t, a, &[i.as_basic_value().into_int_value()], "p") }
        .map_err(err)?;
    let x = b.build_load(f64t, p, "x").map_err(err)?.into_float_value();
    let xx = b.build_float_mul(x, x, "xx").map_err(err)?;
    let s2 = b
        .build_float_add(s.as_basic_value().into_float_value(), xx, "s2")
        .map_err(err)?;
    let i2 = b
        .build_int_add(
            i.as_basic_value().into_int_value(),
            i64t.const_int(1, false),
            "i2",
        )
        .map_err(err)?;
    let more = b
        .build_int_compare(IntPredicate::SLT, i2, n, "more")
        .map_err(err)?;
    i.add_incoming(&[(&i64t.const_zero(), entry), (&i2, body)]);
    s.add_incoming(&[(&f64t.const_zero(), entry), (&s2, body)]);
    b.build_conditional_branch(more, body, exit).map_err(err)?;
    b.position_at_end(exit);
    let r = b.build_phi(f64t, "r").map_err(err)?;
    r.add_incoming(&[(&f64t.const_zero(), entry), (&s2, body)]);
    b.build_return(Some(&r.as_basic_value())).map_err(err)?;
    crate::codegen::optimise(&module, machine, crate::RefPruneFlags::ALL)?;
    let loaded = load_module(&module, &[])?;
    loaded.address("numba_rs.warm_up")?;
    crate::codegen::take_phases();
    Ok(())
}

/// The address the process exports `name` at, as the process-symbol generator finds it.
fn process_address(name: &str) -> Option<usize> {
    let c = CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name; the search only reads the loaded libraries' tables.
    let p = unsafe { inkwell::llvm_sys::support::LLVMSearchForAddressOfSymbol(c.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}
