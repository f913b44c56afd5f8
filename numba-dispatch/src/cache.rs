//! The on-disk cache of compiled specialisations (`cache=True`), laid out as Numba lays
//! out its own: per function an index file and one data file per specialisation, in a
//! directory the host chooses (Numba's locators: `NUMBA_CACHE_DIR`, the source's
//! `__pycache__`, a user-wide directory).
//!
//! - The index, `<stem>.nbri` (`stem` is Numba's `<qualname>-<line>.py311`), holds the
//!   compiler's identity, the source file's stamp (modification time and size) and one
//!   line per specialisation: its number and its key. A changed source file, or another
//!   build of numba-rs, invalidates the whole index, as in Numba.
//! - Each data file, `<stem>.<n>.nbrc`, holds the key again, the native symbol, the
//!   return type's name, the stamps of the source files of the callees linked in (a
//!   changed callee invalidates the entry, which Numba does not check), and the image
//!   (`numba_lower::cache`).
//! - A key names everything that changes the code: argument types, declared return type,
//!   the jit options, the host's fingerprint of the function (its bytecode and closure
//!   variables) and the code generator (`numba_lower::cache::host_id`).
//!
//! The extensions differ from Numba's (`.nbi`/`.nbc`), whose loader would fail on ours.
//! Files are written to a temporary name and renamed, so a reader never sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use numba_lower::CompiledFunction;
use numba_typeinfer::TypeId;

use crate::{bump, CacheStats};

/// Where one function's cache files live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSite {
    /// The directory of the index and data files.
    pub dir: PathBuf,
    /// The file-name stem, `<qualname>-<first line>.py311` as Numba names its files.
    pub stem: String,
    /// The source file whose stamp validates the index.
    pub source: PathBuf,
}

/// A source file's stamp: modification time (ns since the epoch) and size.
pub type Stamp = (u128, u64);

/// The stamp of `path`, if it can be read.
pub fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((mtime, meta.len()))
}

static COMPILER: OnceLock<String> = OnceLock::new();

/// Name the compiler build that writes and reads cache files (numba-py passes the
/// stamp of its extension module): files another build wrote are ignored.
pub fn set_compiler_id(id: String) {
    let _ = COMPILER.set(id);
}

fn compiler_id() -> &'static str {
    COMPILER.get_or_init(|| format!("numba-rs {}", env!("CARGO_PKG_VERSION")))
}

/// `NUMBA_DEBUG_CACHE`: report each file read or written, as Numba's `[cache]` lines.
fn debug(what: &str, path: &Path) {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON
        .get_or_init(|| std::env::var("NUMBA_DEBUG_CACHE").is_ok_and(|v| !v.is_empty() && v != "0"))
    {
        println!("[cache] {what} {:?}", path.display().to_string());
    }
}

const INDEX_MAGIC: &str = "numba-rs cache index 1";
const DATA_MAGIC: &str = "numba-rs cache data 2";

/// One cached specialisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub symbol: String,
    /// The return type's name (numba-typeinfer parses it back).
    pub return_type: String,
    /// The callees' source files and their stamps when the image was made.
    pub deps: Vec<(PathBuf, Stamp)>,
    /// The optimised module with its callees linked in, as bitcode: what a caller
    /// compiled later links in, and what `inspect_llvm` prints.
    pub image: Vec<u8>,
    /// The image's machine code: what loading runs.
    pub code: numba_lower::cache::ObjectCode,
}

impl CacheSite {
    fn index_path(&self) -> PathBuf {
        self.dir.join(format!("{}.nbri", self.stem))
    }

    fn data_path(&self, n: usize) -> PathBuf {
        self.dir.join(format!("{}.{n}.nbrc", self.stem))
    }

    /// The index's entries (number, key), empty when it is missing, stale (source
    /// changed) or from another compiler build.
    fn read_index(&self) -> Vec<(usize, String)> {
        let Ok(text) = std::fs::read_to_string(self.index_path()) else {
            return Vec::new();
        };
        let mut lines = text.lines();
        let current = stamp(&self.source);
        let header_ok = lines.next() == Some(INDEX_MAGIC)
            && lines.next().and_then(|l| l.strip_prefix("compiler ")) == Some(compiler_id())
            && lines
                .next()
                .and_then(|l| l.strip_prefix("stamp "))
                .and_then(parse_stamp)
                .is_some_and(|s| Some(s) == current);
        if !header_ok {
            return Vec::new();
        }
        lines
            .filter_map(|l| {
                let (n, key) = l.split_once('\t')?;
                Some((n.parse().ok()?, key.to_string()))
            })
            .collect()
    }

    /// The entry cached under `key`, if it is valid (its callees' sources unchanged).
    pub fn load(&self, key: &str) -> Option<Entry> {
        let (n, _) = self.read_index().into_iter().find(|(_, k)| k == key)?;
        let path = self.data_path(n);
        let bytes = std::fs::read(&path).ok()?;
        let entry = decode_data(&bytes, key)?;
        if entry.deps.iter().any(|(p, s)| stamp(p) != Some(*s)) {
            return None;
        }
        debug("data loaded from", &path);
        Some(entry)
    }

    /// Store `entry` under `key`; errors are returned for the caller to ignore or report.
    pub fn save(&self, key: &str, entry: &Entry) -> std::io::Result<()> {
        let Some(source_stamp) = stamp(&self.source) else {
            return Ok(());
        };
        std::fs::create_dir_all(&self.dir)?;
        let mut index = self.read_index();
        let n = match index.iter().find(|(_, k)| k == key) {
            Some((n, _)) => *n,
            None => {
                let n = index.iter().map(|(n, _)| n + 1).max().unwrap_or(0);
                index.push((n, key.to_string()));
                n
            }
        };
        let data_path = self.data_path(n);
        write_atomic(&data_path, &encode_data(key, entry))?;
        debug("data saved to", &data_path);
        let mut text = format!(
            "{INDEX_MAGIC}\ncompiler {}\nstamp {} {}\n",
            compiler_id(),
            source_stamp.0,
            source_stamp.1
        );
        for (n, k) in &index {
            text.push_str(&format!("{n}\t{k}\n"));
        }
        let index_path = self.index_path();
        write_atomic(&index_path, text.as_bytes())?;
        debug("index saved to", &index_path);
        Ok(())
    }
}

fn parse_stamp(s: &str) -> Option<Stamp> {
    let (t, n) = s.split_once(' ')?;
    Some((t.parse().ok()?, n.parse().ok()?))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // A name of this process and call: two writers (processes or threads) never share
    // a temporary file; the rename replaces the file whole.
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}.{serial}", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    drop(f);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Keys, symbols, type names and paths hold no newlines (a path that does is not
/// cached: `encode_data` drops such a dependency's entry by failing the round trip).
fn encode_data(key: &str, e: &Entry) -> Vec<u8> {
    let mut out = format!(
        "{DATA_MAGIC}\n{key}\n{}\n{}\n{}\n",
        e.symbol,
        e.return_type,
        e.deps.len()
    );
    for (p, (t, n)) in &e.deps {
        out.push_str(&format!("{t} {n} {}\n", p.display()));
    }
    let code = &e.code;
    out.push_str(&format!("code {} {}\n", code.suffix, code.exports.len()));
    for name in &code.exports {
        out.push_str(&format!("{name}\n"));
    }
    out.push_str(&format!("typecodes {}\n", code.typecodes.len()));
    for (table, names) in &code.typecodes {
        out.push_str(&format!("{table}\t{}\n", names.join("\t")));
    }
    out.push_str(&format!(
        "image {} object {}\n",
        e.image.len(),
        code.object.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&e.image);
    bytes.extend_from_slice(&code.object);
    bytes
}

fn decode_data(bytes: &[u8], key: &str) -> Option<Entry> {
    let mut rest = bytes;
    let mut line = || -> Option<&str> {
        let end = rest.iter().position(|&b| b == b'\n')?;
        let l = std::str::from_utf8(&rest[..end]).ok()?;
        rest = &rest[end + 1..];
        Some(l)
    };
    if line()? != DATA_MAGIC || line()? != key {
        return None;
    }
    let symbol = line()?.to_string();
    let return_type = line()?.to_string();
    let ndeps: usize = line()?.parse().ok()?;
    let mut deps = Vec::with_capacity(ndeps);
    for _ in 0..ndeps {
        let l = line()?;
        let (t, l) = l.split_once(' ')?;
        let (n, p) = l.split_once(' ')?;
        deps.push((PathBuf::from(p), (t.parse().ok()?, n.parse().ok()?)));
    }
    let (suffix, nexports) = line()?.strip_prefix("code ")?.split_once(' ')?;
    let suffix = suffix.to_string();
    let nexports: usize = nexports.parse().ok()?;
    let mut exports = Vec::with_capacity(nexports);
    for _ in 0..nexports {
        exports.push(line()?.to_string());
    }
    let ntables: usize = line()?.strip_prefix("typecodes ")?.parse().ok()?;
    let mut typecodes = Vec::with_capacity(ntables);
    for _ in 0..ntables {
        let mut parts = line()?.split('\t').map(str::to_string);
        let table = parts.next()?;
        typecodes.push((table, parts.filter(|p| !p.is_empty()).collect()));
    }
    let sizes = line()?.strip_prefix("image ")?;
    let (image_len, object_len) = sizes.split_once(" object ")?;
    let image_len: usize = image_len.parse().ok()?;
    let object_len: usize = object_len.parse().ok()?;
    (rest.len() == image_len + object_len).then(|| Entry {
        symbol,
        return_type,
        deps,
        image: rest[..image_len].to_vec(),
        code: numba_lower::cache::ObjectCode {
            object: rest[image_len..].to_vec(),
            suffix,
            exports,
            typecodes,
        },
    })
}

/// The key of a specialisation: argument types, declared return type, the options
/// text, the host's fingerprint of the function and the code generator.
pub fn key(
    args: &[TypeId],
    explicit_return: Option<TypeId>,
    options: &str,
    fingerprint: &str,
) -> Option<String> {
    let host = numba_lower::cache::host_id().ok()?;
    let args: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    let ret = explicit_return.map_or_else(|| "-".to_string(), |t| t.to_string());
    let key = format!(
        "({}) -> {ret} | {options} | {fingerprint} | {host}",
        args.join(", ")
    );
    (!key.contains(['\n', '\t'])).then_some(key)
}

/// The return type named in an entry, if numba-typeinfer can parse it back.
pub fn parse_type(name: &str) -> Option<TypeId> {
    numba_typeinfer::types::parse_cache_name(name)
}

/// The options that change code, as text for a key (with the environment variables
/// that do: bounds checking's default, reference-count pruning).
fn options_text(o: &crate::JitOptions) -> String {
    let locals: Vec<String> = o.locals.iter().map(|(n, t)| format!("{n}:{t}")).collect();
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    format!(
        "fastmath={} error_model={:?} boundscheck={:?}/{} parallel={:?} wrappers={:?} \
         locals=[{}] object_mode={:?} no_looplift={} refprune={}",
        o.fastmath,
        o.error_model,
        o.boundscheck,
        env("NUMBA_BOUNDSCHECK"),
        o.parallel,
        o.wrappers,
        locals.join(","),
        o.object_mode,
        o.no_looplift,
        env("NUMBA_LLVM_REFPRUNE_FLAGS"),
    )
}

/// The image of the specialisation of dispatcher `id` at native address `addr` (a
/// callee being linked into a cached caller), recording its source file's stamp.
fn callee_image(
    id: u64,
    addr: usize,
    deps: &std::cell::RefCell<Vec<(PathBuf, Stamp)>>,
) -> Result<(String, Vec<u8>), numba_lower::cache::Uncacheable> {
    let d = crate::lookup_dispatcher(id).ok_or("a function that no longer exists")?;
    let o = d
        .overloads()
        .into_iter()
        .find(|o| o.native == addr)
        .ok_or("a function that no longer exists")?;
    if let Some(path) = d.source.source_file() {
        if let Some(s) = stamp(&path) {
            if !deps.borrow().iter().any(|(p, _)| p == &path) {
                deps.borrow_mut().push((path, s));
            }
        }
    }
    let image = numba_lower::cache::image(&o, &|i, a| callee_image(i, a, deps))?;
    Ok((o.symbol.clone(), image))
}

impl crate::Dispatcher {
    /// Where and under which key a specialisation for `args` is cached; `None` when
    /// this function is not cached (no `cache=True`, a function the compiler made, or a
    /// host that gives no fingerprint).
    pub(crate) fn cache_key(
        &self,
        args: &[TypeId],
        explicit_return: Option<TypeId>,
    ) -> Option<(CacheSite, String)> {
        let site = self.options.cache.as_ref()?;
        if self.objmode_with.is_some()
            || self.options.code_target != crate::CodeTarget::Cpu
            || self.options.generated
            || self.source.lifted_ir().is_some()
        {
            return None;
        }
        let fingerprint = self.source.cache_fingerprint()?;
        let key = key(
            args,
            explicit_return,
            &options_text(&self.options),
            &fingerprint,
        )?;
        Some((site.clone(), key))
    }

    /// The specialisation cached under `key`, loaded into the JIT.
    pub(crate) fn load_cached(
        &self,
        site: &CacheSite,
        key: &str,
        args: &[TypeId],
    ) -> Option<CompiledFunction> {
        let entry = site.load(key)?;
        let ret = parse_type(&entry.return_type)?;
        let compiled = numba_lower::cache::load(
            entry.image.into(),
            &entry.code,
            &entry.symbol,
            (args, ret),
            &self.options.wrappers,
        )
        .ok()?;
        bump(
            &mut self
                .cache_stats
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .hits,
            args,
        );
        Some(compiled)
    }

    /// Save a freshly compiled specialisation; what keeps it out of the cache becomes
    /// Numba's warning on it.
    pub(crate) fn save_cached(&self, site: &CacheSite, key: &str, compiled: &mut CompiledFunction) {
        bump(
            &mut self
                .cache_stats
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .misses,
            &compiled.arg_types,
        );
        let deps = std::cell::RefCell::new(Vec::new());
        // Callees whose code was linked in (to be inlined): their sources count too.
        for id in numba_lower::cache::linked_callees(&compiled.optimized_ir) {
            if let Some(path) = crate::lookup_dispatcher(id).and_then(|d| d.source.source_file()) {
                if let Some(s) = stamp(&path) {
                    if !deps.borrow().iter().any(|(p, _)| p == &path) {
                        deps.borrow_mut().push((path, s));
                    }
                }
            }
        }
        let entry = (|| -> Result<Entry, String> {
            let ret = compiled.return_type;
            let ret_name = numba_typeinfer::types::cache_name(ret)
                .ok_or_else(|| format!("the type {ret}, which the cache cannot name yet"))?;
            let image = numba_lower::cache::image(compiled, &|i, a| callee_image(i, a, &deps))?;
            let code = numba_lower::cache::object_code(&image).map_err(|e| e.to_string())?;
            Ok(Entry {
                symbol: compiled.symbol.clone(),
                return_type: ret_name,
                deps: deps.take(),
                image,
                code,
            })
        })();
        let short = self.name.rsplit('.').next().unwrap_or(&self.name);
        let problem = match entry {
            Ok(entry) => site
                .save(key, &entry)
                .err()
                .map(|e| format!("Cannot cache compiled function \"{short}\": {e}")),
            Err(reason) => Some(format!(
                "Cannot cache compiled function \"{short}\" as it uses {reason}"
            )),
        };
        if let Some(message) = problem {
            compiled.warnings.push(numba_lower::CompileWarning {
                category: "NumbaWarning".into(),
                message,
                line: 0,
            });
        }
    }

    /// How often specialisations were loaded from the cache and compiled for it.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache_stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trip_and_key_check() {
        let e = Entry {
            symbol: "_ZN8__main__1fB2v1Ex".into(),
            return_type: "float64".into(),
            deps: vec![(PathBuf::from("/tmp/a b.py"), (17, 42))],
            image: vec![0, 10, 255, b'\n', 3],
            code: numba_lower::cache::ObjectCode {
                object: vec![b'\n', 0, 7],
                suffix: ".k0123".into(),
                exports: vec!["f".into(), "f.entry".into()],
                typecodes: vec![
                    (
                        "numba_rs.typecodes.f.0".into(),
                        vec!["int64".into(), "float64".into()],
                    ),
                    ("numba_rs.typecodes.f.1".into(), Vec::new()),
                ],
            },
        };
        let bytes = encode_data("k1", &e);
        assert_eq!(decode_data(&bytes, "k1"), Some(e.clone()));
        assert_eq!(decode_data(&bytes, "k2"), None);
        assert_eq!(decode_data(&bytes[..bytes.len() - 1], "k1"), None);
    }

    #[test]
    fn index_follows_the_source_stamp() {
        let dir = std::env::temp_dir().join(format!("numba-rs-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("m.py");
        std::fs::write(&source, "def f(): pass\n").unwrap();
        let site = CacheSite {
            dir: dir.join("__pycache__"),
            stem: "f-1.py311".into(),
            source: source.clone(),
        };
        let e = Entry {
            symbol: "f".into(),
            return_type: "int64".into(),
            deps: Vec::new(),
            image: vec![1, 2, 3],
            code: numba_lower::cache::ObjectCode {
                object: vec![4],
                suffix: ".k1".into(),
                exports: Vec::new(),
                typecodes: Vec::new(),
            },
        };
        assert_eq!(site.load("k"), None);
        site.save("k", &e).unwrap();
        site.save(
            "k2",
            &Entry {
                image: vec![9],
                ..e.clone()
            },
        )
        .unwrap();
        assert_eq!(site.load("k"), Some(e.clone()));
        assert_eq!(site.load("k2").map(|e| e.image), Some(vec![9]));
        // Another size: the index is stale.
        std::fs::write(&source, "def f():  pass\n").unwrap();
        assert_eq!(site.load("k"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn type_names_parse_back() {
        let t = parse_type("array(float64, 2d, C)").expect("array type");
        assert_eq!(t.to_string(), "array(float64, 2d, C)");
        assert_eq!(parse_type("no such type"), None);
    }
}
