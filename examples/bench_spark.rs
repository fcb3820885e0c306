//! The Spark job next to the CLI on the same evidence (release builds):
//!
//! ```text
//! cargo build --release --features tables
//! cargo run --release --example gen_store -- /tmp/spark/store.ndjson 20000 --emitter-order
//! mkdir /tmp/spark/in && for i in $(seq 0 9); do cp /tmp/spark/store.ndjson /tmp/spark/in/copy-$i.ndjson; done
//! cargo run --release --example bench_spark -- /tmp/spark/store.keys.json /tmp/spark/in
//! ```
//! Runs `aeplens export --format parquet --no-index` and `python -m aeplens.spark --master
//! local[N] --conf spark.driver.memory=8g` (N: every core; the Python of
//! `target/spark-venv`, or `AEPLENS_PYTHON`) on DIR, and prints for each the wall time,
//! records a second and the cores it kept busy (the machine's busy CPU time over the wall
//! time, from `/proc/stat`: run it on an otherwise idle machine).

use std::process::Command;
use std::time::Instant;

/// Seconds of CPU the whole machine has spent busy (user, nice, system, irq, softirq,
/// steal) so far: the JVM Spark starts is not a child this process waits for, so its time
/// is read machine-wide (run on an otherwise idle machine).
fn machine_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").expect("Linux /proc");
    let cpu = stat.lines().next().expect("cpu line");
    let ticks: Vec<f64> = (cpu.split_whitespace().skip(1))
        .map(|t| t.parse().expect("ticks"))
        .collect();
    // user nice system idle iowait irq softirq steal
    (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]) / 100.0
}

/// Runs a command; returns (wall seconds, CPU seconds).
fn timed(cmd: &mut Command) -> (f64, f64) {
    let cpu = machine_cpu();
    let start = Instant::now();
    let out = cmd.output().expect("run");
    let wall = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout).trim());
    (wall, machine_cpu() - cpu)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [keys, dir] = args.as_slice() else {
        eprintln!("usage: bench_spark KEYS.json DIR");
        std::process::exit(2);
    };
    let exe = std::env::current_exe().expect("exe");
    let bin = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let aeplens = bin.join("aeplens");
    let python = std::env::var("AEPLENS_PYTHON").unwrap_or_else(|_| {
        let venv = bin.parent().expect("target").join("spark-venv/bin/python");
        venv.display().to_string()
    });
    let names: Vec<String> = aeplens::load::evidence_files(std::slice::from_ref(dir))
        .into_iter()
        .map(|p| p.display().to_string())
        .collect();
    let records: usize = aeplens::load::load_paths(&names)
        .iter()
        .map(|i| i.records.len())
        .sum();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let scratch = std::env::temp_dir().join(format!("aeplens-bench-spark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    println!("{records} records in {} files, {cores} cores", names.len());
    let report = |what: &str, (wall, cpu): (f64, f64)| {
        println!(
            "{what:<28} {wall:>7.1} s  {:>8.0} records/s  {:.2} cores busy",
            records as f64 / wall,
            cpu / wall
        );
    };
    let cli_out = scratch.join("cli");
    let mut cli = Command::new(&aeplens);
    cli.args([
        "export",
        "--format",
        "parquet",
        "-q",
        "--no-index",
        "--keys",
        keys,
        "-o",
    ])
    .arg(&cli_out)
    .args(&names);
    report("aeplens export (CLI)", timed(&mut cli));
    let job_out = scratch.join("job");
    let mut job = Command::new(&python);
    job.args([
        "-m",
        "aeplens.spark",
        "--master",
        &format!("local[{cores}]"),
    ])
    // Local mode runs the executors in the driver's JVM: give it the memory a worker of
    // this machine would have (1 GB by default).
    .args(["--conf", "spark.driver.memory=8g"])
    .args(["--keys", keys, "--out"])
    .arg(&job_out)
    .arg(dir)
    .env("SPARK_LOCAL_IP", "127.0.0.1");
    report("python -m aeplens.spark", timed(&mut job));
    let _ = std::fs::remove_dir_all(&scratch);
}
