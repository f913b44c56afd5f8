//! Developer tasks for the numba-rs workspace, run as `cargo xtask <command>`.
//!
//! * `setup`    — install what is missing (llvm-19-dev via apt, a `.venv` with
//!   maturin/numpy/pytest) and build the `numba_rs` Python module into the venv.
//! * `demo`     — `setup`, then run `examples/demo.py`.
//! * `test`     — `setup`, then `cargo fmt --check`, `cargo clippy -D warnings`,
//!   every Rust test and the pytest suite, stopping at the first failure.
//! * `fixtures` — regenerate the marshal blobs and `dis` listings under `tests/fixtures/blobs`
//!   (needs `CPython` 3.11 as `python3`).
//! * `docs`     — check the links and cited test files of the Markdown docs.
//! * `fuzz`     — `setup`, then the differential fuzzer (`tests/fuzz/run.py`), passing
//!   its arguments on (`--minutes N`, `--seed S`, `--count K`, ...).
//!
//! Every command runs from the workspace root. This crate has no dependencies
//! beyond `std` so that it builds instantly.

mod docs;

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// Error type of every task: a human-readable message.
type TaskResult<T = ()> = Result<T, String>;

/// Fallback LLVM prefix when `llvm-config-19` is unavailable.
const DEFAULT_LLVM_PREFIX: &str = "/usr/lib/llvm-19";

/// `llvm-config` shipped inside the default LLVM prefix.
const LLVM_CONFIG_IN_PREFIX: &str = "/usr/lib/llvm-19/bin/llvm-config";

/// `llvm-config` name looked up on `PATH`.
const LLVM_CONFIG: &str = "llvm-config-19";

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  setup     install llvm-19-dev (apt) and a .venv with maturin/numpy/pytest if
            missing, then build the numba_rs module into the venv (maturin develop)
  demo      setup, then run examples/demo.py
  test      setup, then cargo fmt --check, cargo clippy -D warnings,
            cargo test (all Rust tests) and pytest tests/python
  fixtures  regenerate tests/fixtures/blobs (marshal + dis text) with the venv's CPython 3.11
  docs      check the links and cited test files of README.md, ARCHITECTURE.md and docs/
  fuzz      setup, then run generated programs under CPython/NumPy, numba_rs (and Numba
            when installed), minimising each difference, crash, leak or hang found;
            arguments go to tests/fuzz/run.py (--minutes N, --seed S, --count K, --jobs J)
  help      show this message";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match run_cli(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Dispatches the subcommand named by the first argument.
fn run_cli(args: &[String]) -> TaskResult {
    let Some(command) = args.first() else {
        println!("{USAGE}");
        return Ok(());
    };
    let root = workspace_root()?;
    match command.as_str() {
        "setup" => setup(&root),
        "demo" => demo(&root),
        "test" => test(&root),
        "fixtures" => fixtures(&root),
        "docs" => docs::docs(&root),
        "fuzz" => fuzz(&root, &args[1..]),
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => {
            eprintln!("{USAGE}");
            Err(format!("unknown command `{other}`"))
        }
    }
}

/// The workspace root: the parent directory of this crate's manifest.
fn workspace_root() -> TaskResult<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "cannot locate the workspace root".to_string())
}

// ---------------------------------------------------------------------------
// Subcommands
// ---------------------------------------------------------------------------

/// `cargo xtask setup`: every step is skipped when already satisfied, except
/// the module build, which maturin/cargo make incremental.
fn setup(root: &Path) -> TaskResult {
    ensure_llvm(root)?;
    ensure_venv(root)?;
    ensure_python_packages(root)?;
    build_python_module(root)
}

/// `cargo xtask demo`: setup, then run the demo script.
fn demo(root: &Path) -> TaskResult {
    setup(root)?;
    let venv = Venv::new(root);
    let mut cmd = venv.command(&venv.python);
    cmd.arg("examples/demo.py");
    run_step(&mut cmd)
}

/// `cargo xtask test`: setup, then formatting, lints, Rust tests and pytest.
fn test(root: &Path) -> TaskResult {
    setup(root)?;

    let mut fmt = cargo_command(root);
    fmt.args(["fmt", "--all", "--", "--check"]);
    run_step(&mut fmt)?;
    docs::docs(root)?;

    let mut clippy = cargo_command(root);
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    run_step(&mut clippy)?;

    let mut cargo_test = cargo_command(root);
    cargo_test
        .args(["test", "--workspace", "--exclude", "numba-py"])
        .env("INSTA_UPDATE", "no");
    run_step(&mut cargo_test)?;

    let venv = Venv::new(root);
    let mut pytest = venv.command(&venv.python);
    pytest.args(["-m", "pytest", "tests/python", "-q"]);
    run_step(&mut pytest)
}

/// `cargo xtask fuzz [args]`: setup, then the differential fuzzer with `args`.
fn fuzz(root: &Path, args: &[String]) -> TaskResult {
    setup(root)?;
    let venv = Venv::new(root);
    let mut cmd = venv.command(&venv.python);
    cmd.arg("tests/fuzz/run.py").args(args);
    run_step(&mut cmd)
}

/// `cargo xtask fixtures`: regenerate the marshal blobs with `CPython` 3.11.
fn fixtures(root: &Path) -> TaskResult {
    // The project venv's CPython 3.11 has NumPy, which `tests/fixtures/arrays.py` imports.
    let venv_python = root.join(".venv/bin/python");
    if !venv_python.exists() {
        setup(root)?;
    }
    let mut cmd = command_in(root, venv_python.as_os_str());
    cmd.arg("tests/fixtures/compile_fixtures.py");
    run_step(&mut cmd)
}

// ---------------------------------------------------------------------------
// Setup steps
// ---------------------------------------------------------------------------

/// Installs `llvm-19-dev` through apt unless an LLVM 19 `llvm-config` exists.
fn ensure_llvm(root: &Path) -> TaskResult {
    if let Some(found) = find_llvm_config() {
        println!("==> llvm-19: found {}, skipping install", found.display());
        return Ok(());
    }
    println!("==> llvm-19: {LLVM_CONFIG} not found, installing llvm-19-dev via apt");
    let mut update = apt_command(root);
    update.arg("update");
    run_step(&mut update)?;
    let mut install = apt_command(root);
    install.args(["install", "-y", "llvm-19-dev"]);
    run_step(&mut install)
}

/// Creates `.venv` with `python3 -m venv` unless its interpreter exists.
fn ensure_venv(root: &Path) -> TaskResult {
    let venv = Venv::new(root);
    if venv.python.exists() {
        println!(
            "==> venv: {} exists, skipping creation",
            venv.python.display()
        );
        return Ok(());
    }
    println!("==> venv: creating {}", venv.dir.display());
    let mut cmd = command_in(root, "python3");
    cmd.args(["-m", "venv", ".venv"]);
    run_step(&mut cmd)
}

/// Installs maturin, numpy, pytest and distributed (Dask's process cluster, for the
/// test that ships jitted functions to worker processes) into the venv unless present,
/// then the optional test dependencies: cffi (the C-interop tests call cffi functions)
/// and llvmlite (`@intrinsic` bodies are written with its IR builder). Tests needing an
/// optional one skip without it, so failing to install one only warns.
fn ensure_python_packages(root: &Path) -> TaskResult {
    let venv = Venv::new(root);
    let mut probe = venv.command(&venv.python);
    probe.args(["-c", "import numpy, pytest, distributed"]);
    if venv.maturin.exists() && succeeds(&mut probe) {
        println!("==> venv: maturin, numpy, pytest and distributed present, skipping install");
    } else {
        let mut install = venv.command(&venv.python);
        install.args([
            "-m",
            "pip",
            "install",
            "-q",
            "maturin",
            "numpy",
            "pytest",
            "distributed",
        ]);
        run_step(&mut install)?;
    }
    let mut optional = venv.command(&venv.python);
    optional.args(["-c", "import cffi, llvmlite"]);
    if succeeds(&mut optional) {
        println!("==> venv: cffi and llvmlite present, skipping install");
    } else {
        let mut install = venv.command(&venv.python);
        install.args(["-m", "pip", "install", "-q", "cffi", "llvmlite"]);
        if let Err(e) = run_step(&mut install) {
            println!("==> warning: {e}; the tests needing cffi or llvmlite will be skipped");
        }
    }
    ensure_ptxas(&venv);
    Ok(())
}

/// NVIDIA's PTX assembler (`ptxas`, from the `nvidia-cuda-nvcc-cu12` wheel: no CUDA
/// toolkit, no GPU), which the cuda target's tests run on the PTX they generate for
/// sm_80 and sm_90. Optional: without it those checks skip.
fn ensure_ptxas(venv: &Venv) {
    let mut probe = venv.command(&venv.python);
    probe.args([
        "-c",
        "import glob, os, sys; assert glob.glob(os.path.join(sys.prefix, 'lib', 'python3*', \
         'site-packages', 'nvidia', 'cuda_nvcc', 'bin', 'ptxas'))",
    ]);
    if succeeds(&mut probe) {
        println!("==> venv: ptxas present, skipping install");
        return;
    }
    let mut install = venv.command(&venv.python);
    install.args(["-m", "pip", "install", "-q", "nvidia-cuda-nvcc-cu12"]);
    if let Err(e) = run_step(&mut install) {
        println!("==> warning: {e}; the PTX assembly checks will be skipped");
    }
}

/// Builds the `numba_rs` module into the venv with `maturin develop`.
fn build_python_module(root: &Path) -> TaskResult {
    let venv = Venv::new(root);
    let mut cmd = venv.command(&venv.maturin);
    cmd.args(["develop", "--release", "-m", "numba-py/Cargo.toml"])
        .env("PYO3_PYTHON", &venv.python)
        .env("LLVM_SYS_191_PREFIX", llvm_prefix());
    run_step(&mut cmd)
}

// ---------------------------------------------------------------------------
// Environment helpers
// ---------------------------------------------------------------------------

/// Paths of the project's virtual environment (`<root>/.venv`).
struct Venv {
    root: PathBuf,
    dir: PathBuf,
    bin: PathBuf,
    python: PathBuf,
    maturin: PathBuf,
}

impl Venv {
    fn new(root: &Path) -> Self {
        let dir = root.join(".venv");
        let bin = dir.join("bin");
        Self {
            root: root.to_path_buf(),
            python: bin.join("python"),
            maturin: bin.join("maturin"),
            dir,
            bin,
        }
    }

    /// A command run from the root with the venv activated
    /// (`VIRTUAL_ENV` set and its `bin` first on `PATH`).
    fn command(&self, program: &Path) -> Command {
        let mut cmd = command_in(&self.root, program);
        cmd.env("VIRTUAL_ENV", &self.dir)
            .env("PATH", self.path_with_bin());
        cmd
    }

    /// `PATH` with the venv's `bin` directory prepended.
    fn path_with_bin(&self) -> OsString {
        let inherited = env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(self.bin.clone()).chain(env::split_paths(&inherited));
        // Only fails if a directory contains ':', in which case keep PATH as is.
        env::join_paths(dirs).unwrap_or(inherited)
    }
}

/// A command for `program`, run from `root`, inheriting stdio.
fn command_in(root: &Path, program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root);
    cmd
}

/// A cargo command: `$CARGO` when set (as under `cargo xtask`), else `cargo`.
fn cargo_command(root: &Path) -> Command {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    command_in(root, cargo)
}

/// `apt-get` run non-interactively, through `sudo` unless we are root.
fn apt_command(root: &Path) -> Command {
    let mut cmd = if running_as_root() {
        command_in(root, "apt-get")
    } else {
        let mut sudo = command_in(root, "sudo");
        sudo.args(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]);
        sudo
    };
    cmd.env("DEBIAN_FRONTEND", "noninteractive");
    cmd
}

/// Whether `id -u` reports uid 0.
fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// `llvm-config-19` on `PATH`, else the one in the default prefix, if any.
fn find_llvm_config() -> Option<PathBuf> {
    find_on_path(LLVM_CONFIG).or_else(|| {
        let in_prefix = PathBuf::from(LLVM_CONFIG_IN_PREFIX);
        in_prefix.is_file().then_some(in_prefix)
    })
}

/// The first `PATH` entry containing a file called `name`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The LLVM 19 prefix from `llvm-config-19 --prefix`, else the default.
fn llvm_prefix() -> OsString {
    Command::new(LLVM_CONFIG)
        .arg("--prefix")
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|prefix| !prefix.is_empty())
        .map_or_else(|| OsString::from(DEFAULT_LLVM_PREFIX), OsString::from)
}

// ---------------------------------------------------------------------------
// Process helpers
// ---------------------------------------------------------------------------

/// Prints a header, runs `cmd` with inherited stdio and fails on a non-zero exit.
fn run_step(cmd: &mut Command) -> TaskResult {
    let shown = describe(cmd);
    println!("==> {shown}");
    let status = cmd
        .status()
        .map_err(|err| format!("could not start `{shown}`: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// Runs `cmd` quietly and reports whether it exited successfully.
fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The command line of `cmd` for messages, with the env vars it sets
/// (except `PATH`, which is long and only prepends the venv).
fn describe(cmd: &Command) -> String {
    let envs = cmd.get_envs().filter_map(|(key, value)| {
        let value = value?;
        (key != "PATH").then(|| format!("{}={}", key.to_string_lossy(), value.to_string_lossy()))
    });
    let program = std::iter::once(display_program(cmd));
    let args = cmd.get_args().map(|arg| arg.to_string_lossy().into_owned());
    envs.chain(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The program of `cmd`, relative to its working directory when inside it,
/// else just its file name for absolute paths (e.g. `$CARGO` shows as `cargo`).
fn display_program(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program());
    let shown = cmd
        .get_current_dir()
        .and_then(|dir| program.strip_prefix(dir).ok())
        .or_else(|| {
            program
                .is_absolute()
                .then(|| program.file_name().map(Path::new))
                .flatten()
        })
        .unwrap_or(program);
    shown.to_string_lossy().into_owned()
}
