//! The Spark job next to the CLI on the same evidence (release builds):
//!
//! ```text
//! cargo build --release --features tables
//! cargo run --release --example gen_store -- /tmp/spark/store.ndjson 20000 --emitter-order
//! mkdir /tmp/spark/in && for i in $(seq 0 9); do cp /tmp/spark/store.ndjson /tmp/spark/in/copy-$i.ndjson; done
//! cargo run --release --example bench_spark -- /tmp/spark/store.keys.json /tmp/spark/in 3
//! ```
//! Runs, ROUNDS times alternating (default 1), `aeplens export --format parquet
//! --no-index` and `python -m aeplens.spark` with Spark's default memory settings on one
//! core (`local[1]`) and on every core (`local[N]`; the Python of `target/spark-venv`, or
//! `AEPLENS_PYTHON`) on DIR. Prints for each run the wall time, records a second and the
//! cores it kept busy (the machine's busy CPU time over the wall time, from `/proc/stat`:
//! run it on an otherwise idle machine), then the medians and the two ratios the targets
//! name: the job on every core over the CLI, and one core over every core.

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
    let (keys, dir, rounds) = match args.as_slice() {
        [keys, dir] => (keys, dir, 1),
        [keys, dir, rounds] => (keys, dir, rounds.parse().expect("ROUNDS: a number")),
        _ => {
            eprintln!("usage: bench_spark KEYS.json DIR [ROUNDS]");
            std::process::exit(2);
        }
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
            "{what:<32} {wall:>7.1} s  {:>8.0} records/s  {:.2} cores busy",
            records as f64 / wall,
            cpu / wall
        );
        wall
    };
    let job = |master: String| {
        let mut job = Command::new(&python);
        job.args(["-m", "aeplens.spark", "--master", &master])
            .args(["--keys", keys, "--out"])
            .arg(scratch.join(format!("job-{master}")))
            .arg(dir)
            .env("SPARK_LOCAL_IP", "127.0.0.1");
        job
    };
    let (mut cli_walls, mut one_walls, mut all_walls) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut cli = Command::new(&aeplens);
        cli.args(["export", "--format", "parquet", "-q", "--no-index"])
            .args(["--keys", keys, "-o"])
            .arg(scratch.join("cli"))
            .args(&names);
        cli_walls.push(report("aeplens export (CLI)", timed(&mut cli)));
        let one = "local[1]".to_string();
        one_walls.push(report(
            &format!("aeplens.spark {one}"),
            timed(&mut job(one.clone())),
        ));
        let all = format!("local[{cores}]");
        all_walls.push(report(
            &format!("aeplens.spark {all}"),
            timed(&mut job(all.clone())),
        ));
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (cli, one, all) = (median(cli_walls), median(one_walls), median(all_walls));
    println!(
        "medians: CLI {cli:.1} s, local[1] {one:.1} s, local[{cores}] {all:.1} s; \
         job over CLI {:.2}x, local[1] over local[{cores}] {:.2}x",
        all / cli,
        one / all
    );
}
