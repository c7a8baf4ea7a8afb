//! Hostile templates end with an error, never a hang, a crash or unbounded memory.

use super::{fails, ok};

#[test]
fn deep_nesting_is_refused_at_parse_time() {
    let parens = format!("{{{{ {}1{} }}}}", "(".repeat(150), ")".repeat(150));
    assert!(fails(&parens, &[]).contains("nests deeper than 100 levels"));
    let ifs = format!(
        "{}x{}",
        "{{ if true }}".repeat(150),
        "{{ end }}".repeat(150)
    );
    assert!(fails(&ifs, &[]).contains("nests deeper"));
    let fine = format!("{}x{}", "{{ if true }}".repeat(50), "{{ end }}".repeat(50));
    assert_eq!(ok(&fine, &[]), "x");
}

#[test]
fn recursion_and_loops_are_bounded() {
    let recursive = "{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}";
    assert!(fails(recursive, &[]).contains("exceeded maximum template depth"));
    assert!(fails("{{ range until 100000000 }}{{ end }}", &[]).contains("exceeds the limit"));
    assert!(
        fails(
            "{{ range until 999999 }}{{ range until 999999 }}{{ end }}{{ end }}",
            &[]
        )
        .contains("steps")
    );
    assert!(fails("{{ range 1000000000000 }}{{ end }}", &[]).contains("steps"));
}

#[test]
fn output_and_values_are_bounded() {
    assert!(fails("{{ repeat 10000000 \"a\" }}", &[]).contains("exceeds the limit"));
    assert!(
        fails(
            "{{ range until 1000 }}{{ repeat 100000 \"a\" }}{{ end }}",
            &[]
        )
        .contains("output exceeds")
    );
    let nested = "{{ $x := list }}{{ range until 500 }}{{ $x = list $x }}{{ end }}";
    assert!(fails(nested, &[]).contains("value nests deeper"));
    let cycle = ok(
        "{{ $d := dict }}{{ $_ := set $d \"self\" $d }}{{ $d }}",
        &[],
    );
    assert!(cycle.starts_with("map[self:map[self:") && cycle.contains("..."));
    assert!(
        fails(
            "{{ $d := dict }}{{ $_ := set $d \"self\" $d }}{{ toJson $d | fail }}",
            &[]
        )
        .len()
            < 500
    );
}

#[test]
fn printf_widths_are_bounded_before_they_allocate() {
    // Issue 23: one wide verb repeated in one format would otherwise allocate a megabyte per
    // repetition before any output limit applies.
    let wide = format!("{{{{ printf \"{}\" 1 | len }}}}", "%[1]999999d".repeat(20));
    assert!(fails(&wide, &[]).contains("printf output exceeds 8388608 bytes"));
    // Go caps one width at a million: a single wide verb still prints.
    assert_eq!(ok("{{ printf \"%[1]999999d\" 1 | len }}", &[]), "999999");
}

#[test]
fn work_in_function_calls_is_bounded() {
    let budget = "exceeds its work budget";
    let big_strings = "{{ range until 100000 }}{{ $x := repeat 1000000 \"a\" }}{{ end }}";
    assert!(fails(big_strings, &[]).contains(budget));
    let doubling =
        "{{ $x := list 1 }}{{ range until 90 }}{{ $x = list $x $x }}{{ end }}{{ len $x }}";
    assert!(fails(doubling, &[]).contains(budget));
    let quadratic = "{{ $l := until 100000 }}{{ uniq $l | len }}";
    assert!(fails(quadratic, &[]).contains(budget));
    let costly = "{{ range until 100 }}{{ htpasswd \"u\" \"p\" \"sha\" }}{{ end }}";
    assert!(fails(costly, &[]).contains(budget));
    let printing = "{{ $x := list 1 }}{{ range until 90 }}{{ $x = list $x $x }}{{ end }}";
    assert!(fails(&format!("{printing}{{{{ $x }}}}"), &[]).contains(budget));
    // Real templates stay far below: 99 costly calls and megabytes of data are fine.
    assert_eq!(
        ok(
            "{{ range until 99 }}{{ htpasswd \"u\" \"p\" \"sha\" | len }}{{ end }}",
            &[]
        ),
        "35".repeat(99)
    );
    assert_eq!(
        ok(
            "{{ range until 100 }}{{ repeat 100000 \"a\" | len }}{{ end }}",
            &[]
        ),
        "100000".repeat(100)
    );
}

/// Renders `source` `times` times drawing on one budget; the results in order.
fn shared(source: &str, times: usize) -> Vec<Result<usize, String>> {
    let budget = crate::Budget::default();
    let data = std::collections::BTreeMap::new();
    (0..times)
        .map(|_| {
            crate::render_within("t", source, &data, &Default::default(), &budget)
                .map(|out| out.len())
                .map_err(|error| error.to_string())
        })
        .collect()
}

#[test]
fn renders_sharing_a_budget_share_every_limit() {
    // Each template alone stays within the limits (more than half of one of them); a second
    // render on the same budget exceeds it, as an object's many templates would.
    let cases = [
        (
            "{{ range until 700000 }}{{ end }}{{ range until 700000 }}{{ end }}",
            "steps",
        ),
        (
            "{{ range until 5 }}{{ repeat 900000 \"a\" }}{{ end }}",
            "output exceeds",
        ),
        (
            "{{ range until 500 }}{{ $x := repeat 900000 \"a\" }}{{ end }}",
            "exceeds its work budget",
        ),
    ];
    for (source, limit) in cases {
        ok(source, &[]);
        let results = shared(source, 2);
        assert!(
            results[0].is_ok(),
            "{source}: first render {:?}",
            results[0]
        );
        let error = results[1].clone().expect_err(source);
        assert!(error.contains(limit), "{source}: {error}");
    }
}

#[test]
fn an_exhausted_budget_fails_every_later_render() {
    let results = shared("{{ range until 5 }}{{ repeat 900000 \"a\" }}{{ end }}", 4);
    assert!(results[0].is_ok());
    for later in &results[1..] {
        assert!(
            later
                .as_ref()
                .is_err_and(|error| error.contains("output exceeds"))
        );
    }
    // A small template still fits in what the failed ones left.
    let budget = crate::Budget::default();
    let data = std::collections::BTreeMap::new();
    let render = |source| crate::render_within("t", source, &data, &Default::default(), &budget);
    assert!(render("{{ range until 9 }}{{ repeat 900000 \"a\" }}{{ end }}").is_ok());
    assert_eq!(render("{{ \"ok\" }}").unwrap(), b"ok");
    assert!(render("{{ repeat 900000 \"a\" }}").is_err());
}
