//! Measuring the controller from outside, for the scale benchmark: its memory and CPU time
//! from `/proc`, and counters from its own `/metrics` page.

use std::collections::BTreeMap;

/// Memory and CPU of a process, read from `/proc/<pid>`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessSample {
    /// Resident set size now, in KiB.
    pub rss_kib: u64,
    /// Peak resident set size so far, in KiB.
    pub peak_rss_kib: u64,
    /// The part of `rss_kib` that is file-backed, in KiB: mostly the binary's own pages,
    /// which the kernel maps in whole page-cache folios (on 6.x kernels hundreds of KiB per
    /// touched spot), so it varies between runs and kernels far more than the heap does.
    pub rss_file_kib: u64,
    /// User plus system CPU time so far, in seconds.
    pub cpu_seconds: f64,
}

/// Reads `/proc/<pid>/status` and `/proc/<pid>/stat`; `None` once the process is gone.
pub fn sample(pid: u32) -> Option<ProcessSample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let after_name = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |index: usize| fields.get(index).and_then(|v| v.parse::<u64>().ok());
    let cpu_ticks = ticks(11)? + ticks(12)?;
    Some(ProcessSample {
        rss_kib: field("VmRSS:"),
        peak_rss_kib: field("VmHWM:"),
        rss_file_kib: field("RssFile:"),
        cpu_seconds: cpu_ticks as f64 / clock_ticks_per_second(),
    })
}

/// The kernel's USER_HZ: 100 on every Linux we run on.
fn clock_ticks_per_second() -> f64 {
    100.0
}

/// The sum of every sample of `metric` whose labels contain all of `labels` (each as
/// `name="value"`), from a Prometheus text page.
pub fn metric_sum(page: &str, metric: &str, labels: &[&str]) -> f64 {
    page.lines()
        .filter(|line| {
            line.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter(|line| labels.iter().all(|label| line.contains(label)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The controller's `rest_client_requests_by_resource_total` summed by verb and resource
/// (every response code), e.g. `("apply", "secrets")`.
pub fn requests_by_resource(page: &str) -> BTreeMap<(String, String), f64> {
    let label = |line: &str, name: &str| {
        line.split(&format!("{name}=\""))
            .nth(1)?
            .split('"')
            .next()
            .map(str::to_owned)
    };
    let mut requests = BTreeMap::new();
    for line in page
        .lines()
        .filter(|line| line.starts_with("rest_client_requests_by_resource_total{"))
    {
        let (Some(verb), Some(resource)) = (label(line, "verb"), label(line, "resource")) else {
            continue;
        };
        let value: f64 = line
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        *requests.entry((verb, resource)).or_insert(0.0) += value;
    }
    requests
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"# HELP x
rest_client_requests_total{code="200",host="h",method="GET"} 3
rest_client_requests_total{code="404",host="h",method="GET"} 1
rest_client_requests_total{code="200",host="h",method="PATCH"} 2
rest_client_requests_by_resource_total{verb="get",resource="secrets",code="200"} 3
rest_client_requests_by_resource_total{verb="get",resource="secrets",code="404"} 1
rest_client_requests_by_resource_total{verb="apply",resource="externalsecrets/status",code="200"} 2
externalsecret_status_condition{name="a",namespace="n",condition="Ready",status="True"} 1
externalsecret_status_condition{name="a",namespace="n",condition="Ready",status="False"} 0
externalsecret_status_condition_other 7
"#;

    #[test]
    fn metrics_are_summed_by_labels_verb_and_resource() {
        assert_eq!(
            metric_sum(
                PAGE,
                "externalsecret_status_condition",
                &["status=\"True\""]
            ),
            1.0
        );
        assert_eq!(metric_sum(PAGE, "rest_client_requests_total", &[]), 6.0);
        let requests = requests_by_resource(PAGE);
        assert_eq!(requests[&("get".to_owned(), "secrets".to_owned())], 4.0);
        assert_eq!(
            requests[&("apply".to_owned(), "externalsecrets/status".to_owned())],
            2.0
        );
        assert_eq!(requests.len(), 2);
    }

    #[test]
    fn this_process_can_be_sampled() {
        let own = sample(std::process::id()).expect("/proc of this process");
        assert!(own.rss_kib > 0 && own.peak_rss_kib >= own.rss_kib);
        assert!(own.rss_file_kib > 0 && own.rss_file_kib < own.rss_kib);
    }
}
