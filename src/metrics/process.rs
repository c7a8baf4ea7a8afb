//! The `process_*` metrics Go's client (`collectors.NewProcessCollector`, which
//! controller-runtime registers) exports on Linux, read from `/proc` at each scrape with the
//! same names, help texts and units: CPU seconds, open and maximum file descriptors, virtual
//! and resident memory, the start time and the bytes the process's network namespace sent
//! and received. A value `/proc` cannot give (another OS, an unreadable file) is left out, as
//! Go's collector leaves out what it cannot read.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on every Linux
/// architecture Go's procfs library supports; it assumes the same).
const TICKS_PER_SECOND: f64 = 100.0;

/// Reads the process metrics on every scrape.
#[derive(Debug, Default)]
pub(super) struct ProcessCollector;

/// One sample: name, help, whether it is a counter, value.
type Sample = (&'static str, &'static str, bool, f64);

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for (name, help, counter, value) in samples() {
            if counter {
                let metric = ConstCounter::new(value);
                metric.encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    MetricType::Counter,
                )?)?;
            } else {
                let metric = ConstGauge::new(value);
                metric.encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)?;
            }
        }
        Ok(())
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Every sample `/proc` gives now.
fn samples() -> Vec<Sample> {
    let mut samples = Vec::new();
    if let Some(stat) = read("/proc/self/stat").as_deref().and_then(parse_stat) {
        samples.push((
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            true,
            stat.cpu_ticks / TICKS_PER_SECOND,
        ));
        samples.push((
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            false,
            stat.virtual_bytes,
        ));
        if let Some(boot) = read("/proc/stat").as_deref().and_then(boot_time) {
            samples.push((
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                false,
                boot + stat.start_ticks / TICKS_PER_SECOND,
            ));
        }
    }
    if let Some(rss) = read("/proc/self/status")
        .as_deref()
        .and_then(resident_bytes)
    {
        samples.push((
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            false,
            rss,
        ));
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        samples.push((
            "process_open_fds",
            "Number of open file descriptors.",
            false,
            fds.count() as f64,
        ));
    }
    if let Some(limits) = read("/proc/self/limits") {
        for (row, name, help) in [
            (
                "Max open files",
                "process_max_fds",
                "Maximum number of open file descriptors.",
            ),
            (
                "Max address space",
                "process_virtual_memory_max_bytes",
                "Maximum amount of virtual memory available in bytes.",
            ),
        ] {
            if let Some(limit) = soft_limit(&limits, row) {
                samples.push((name, help, false, limit));
            }
        }
    }
    if let Some((received, sent)) = read("/proc/self/net/dev").as_deref().and_then(network) {
        samples.push((
            "process_network_receive_bytes",
            "Number of bytes received by the process over the network.",
            true,
            received,
        ));
        samples.push((
            "process_network_transmit_bytes",
            "Number of bytes sent by the process over the network.",
            true,
            sent,
        ));
    }
    samples
}

/// The fields of `/proc/self/stat` the metrics use.
#[derive(Debug, PartialEq)]
struct Stat {
    cpu_ticks: f64,
    start_ticks: f64,
    virtual_bytes: f64,
}

/// Fields after the command (which may hold spaces and parentheses, so it is skipped up to the
/// last `)`): state is field 3, utime 14, stime 15, starttime 22, vsize 23 (proc(5)).
fn parse_stat(stat: &str) -> Option<Stat> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |number: usize| -> Option<f64> { fields.get(number - 3)?.parse().ok() };
    Some(Stat {
        cpu_ticks: field(14)? + field(15)?,
        start_ticks: field(22)?,
        virtual_bytes: field(23)?,
    })
}

/// `btime` of `/proc/stat`: the boot time, seconds since the epoch.
fn boot_time(stat: &str) -> Option<f64> {
    stat.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|value| value.trim().parse().ok())
}

/// `VmRSS` of `/proc/self/status` (in kB) in bytes.
fn resident_bytes(status: &str) -> Option<f64> {
    let kilobytes: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kilobytes * 1024.0)
}

/// The soft limit of `row` in `/proc/self/limits`; `unlimited` is Go's `-1` cast to an
/// unsigned maximum, reported as 2^64 - 1 like Go's collector.
fn soft_limit(limits: &str, row: &str) -> Option<f64> {
    let line = limits.lines().find(|line| line.starts_with(row))?;
    let soft = line.get(row.len()..)?.split_whitespace().next()?;
    if soft == "unlimited" {
        return Some(u64::MAX as f64);
    }
    soft.parse().ok()
}

/// Received and sent bytes summed over every interface of `/proc/self/net/dev`.
fn network(dev: &str) -> Option<(f64, f64)> {
    let mut totals = None;
    for line in dev.lines().skip(2) {
        let (_, counters) = line.split_once(':')?;
        let counters: Vec<f64> = counters
            .split_whitespace()
            .filter_map(|value| value.parse().ok())
            .collect();
        let (received, sent) = (counters.first()?, counters.get(8)?);
        let (all_received, all_sent) = totals.get_or_insert((0.0, 0.0));
        *all_received += received;
        *all_sent += sent;
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stat_line_whose_command_has_spaces_and_parentheses() {
        let line = "42 (my (odd) cmd) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 \
                    12345 1073741824 2048 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                cpu_ticks: 300.0,
                start_ticks: 12345.0,
                virtual_bytes: 1_073_741_824.0,
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn reads_limits_status_boot_time_and_network() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n\
                      Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max open files"), Some(1024.0));
        assert_eq!(
            soft_limit(limits, "Max address space"),
            Some(u64::MAX as f64)
        );
        assert_eq!(
            resident_bytes("Name:\tx\nVmRSS:\t    2048 kB\n"),
            Some(2_097_152.0)
        );
        assert_eq!(
            boot_time("cpu 1 2\nbtime 1700000000\n"),
            Some(1_700_000_000.0)
        );
        let dev = "Inter-|   Receive    |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes\n\
                   lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n\
                   eth0: 900 9 0 0 0 0 0 0 50 5 0 0 0 0 0 0\n";
        assert_eq!(network(dev), Some((1000.0, 150.0)));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reports_every_linux_metric() {
        let names: Vec<&str> = samples().iter().map(|sample| sample.0).collect();
        for expected in [
            "process_cpu_seconds",
            "process_virtual_memory_bytes",
            "process_start_time_seconds",
            "process_resident_memory_bytes",
            "process_open_fds",
            "process_max_fds",
            "process_virtual_memory_max_bytes",
            "process_network_receive_bytes",
            "process_network_transmit_bytes",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
    }
}
