//! Statistics in the C interpreter (vm.c) through `HostSession` with
//! several simulated CPUs: STADD on each CPU's copy, the extractors'
//! merge, STHIST records, STBKT, and the run-time errors.
mod common;
use common::*;
use vm_spec::abi::*;
use vm_spec::hist::bucket_of;
use vm_spec::program::*;
use vm_spec::records::Record;
use vm_spec::tables::imm_pack;
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

/// Handler 0 adds r0 (global 0) to statistic 0; handler 1 reads every
/// extractor into globals 1..=7; handler 2 emits the histogram; handler 3
/// reads bucket (global 0) into global 1.
fn prog(hist: Hist) -> Program {
    let mut p = program(vec![
        handler(
            STP_CTX_TIMER,
            1,
            0,
            vec![i(STP_OP_LDG, 0, 0, 0, 0), i(STP_OP_STADD, 0, 0, 0, 0), RET],
        ),
        handler(
            STP_CTX_END,
            1,
            0,
            [
                STP_OP_STCOUNT,
                STP_OP_STSUM,
                STP_OP_STMIN,
                STP_OP_STMAX,
                STP_OP_STAVG,
                STP_OP_STVAR,
            ]
            .iter()
            .enumerate()
            .flat_map(|(k, &op)| [i(op, 0, 0, 0, 0), i(STP_OP_STG, 0, 0, 0, k as i32 + 1)])
            .chain([RET])
            .collect(),
        ),
        handler(STP_CTX_END, 1, 0, vec![i(STP_OP_STHIST, 0, 0, 0, 0), RET]),
        handler(
            STP_CTX_END,
            2,
            0,
            vec![
                i(STP_OP_LDG, 0, 0, 0, 0),
                i(STP_OP_STBKT, 1, 0, 0, 0),
                i(STP_OP_STG, 1, 0, 0, 1),
                RET,
            ],
        ),
    ]);
    p.globals = long_globals(8);
    p.stats = vec![st(hist, true, 0)];
    p
}

/// Adds `values`, value k on CPU k % cpus.
fn session(hist: Hist, cpus: u32, values: &[i64]) -> HostSession {
    let mut s = HostSession::from_program(&prog(hist)).expect("verifies");
    s.set_cpus(cpus);
    for (k, &v) in values.iter().enumerate() {
        s.set_global(0, v);
        let env = HostEnv {
            cpu: (k as u32 % cpus) as i64,
            ..Default::default()
        };
        s.run_handler(0, &env).unwrap();
    }
    s
}

#[test]
fn extractors_are_the_same_on_any_number_of_cpus() {
    let vals: Vec<i64> = (0..200).map(|k| (k * 7919) % 1000 - 300).collect();
    let mut seen = None;
    for cpus in [1, 2, 3, 5, 16] {
        let mut s = session(Hist::Log, cpus, &vals);
        s.run_handler(1, &HostEnv::default()).unwrap();
        let g = s.globals();
        let n = vals.len() as i64;
        let sum: i64 = vals.iter().sum();
        assert_eq!(g[1], n);
        assert_eq!(g[2], sum);
        assert_eq!(g[3], *vals.iter().min().unwrap());
        assert_eq!(g[4], *vals.iter().max().unwrap());
        assert_eq!(g[5], sum / n);
        // Integer variance: close to the exact one, whatever the split.
        let mean = sum as f64 / n as f64;
        let var = vals.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(
            (g[6] as f64 - var).abs() / var < 0.01,
            "cpus {cpus}: {} vs {var}",
            g[6]
        );
        // The histogram is exactly the same.
        s.run_handler(2, &HostEnv::default()).unwrap();
        let hist = s
            .records()
            .into_iter()
            .find_map(|r| match r {
                Record::Hist { hist, .. } => Some(hist),
                _ => None,
            })
            .unwrap();
        let mut want = vec![0i64; STP_HIST_LOG_BUCKETS as usize];
        for &v in &vals {
            want[bucket_of(&Hist::Log, v)] += 1;
        }
        assert_eq!(hist.buckets, want);
        if let Some(prev) = &seen {
            assert_eq!(prev, &hist.buckets);
        }
        seen = Some(hist.buckets);
    }
}

#[test]
fn linear_buckets_and_bucket_reads() {
    let kind = Hist::Linear {
        start: -10,
        stop: 10,
        interval: 5,
    };
    let vals = [
        -100,
        -11,
        -10,
        -6,
        -5,
        0,
        4,
        9,
        10,
        14,
        15,
        1000,
        i64::MIN,
        i64::MAX,
    ];
    let mut s = session(kind, 3, &vals);
    let nb = kind.nbuckets() as i64;
    assert_eq!(nb, 7);
    for b in 0..nb {
        s.set_global(0, b);
        s.run_handler(3, &HostEnv::default()).unwrap();
        let want = vals
            .iter()
            .filter(|&&v| bucket_of(&kind, v) as i64 == b)
            .count() as i64;
        assert_eq!(s.globals()[1], want, "bucket {b}");
    }
    for b in [-1, nb, i64::MAX] {
        s.set_global(0, b);
        let e = s.run_handler(3, &HostEnv::default()).unwrap_err();
        assert_eq!(e.code, STP_RTE_HIST_INDEX);
        assert_eq!(e.message, "histogram index out of range");
    }
}

#[test]
fn empty_statistic_errors() {
    let mut s = session(Hist::Log, 4, &[]);
    for h in [1, 2, 3] {
        s.set_global(0, 0);
        let e = s.run_handler(h, &HostEnv::default()).unwrap_err();
        assert_eq!(e.code, STP_RTE_EMPTY_AGG, "handler {h}");
        assert_eq!(e.message, "empty aggregate");
    }
    // @count and @sum of an empty statistic are 0: the error comes at STMIN.
    assert_eq!(s.globals()[1], 0);
    assert_eq!(s.globals()[2], 0);
}

#[test]
fn a_cpu_outside_the_area_fails_the_instruction() {
    let mut s = HostSession::from_program(&prog(Hist::Log)).unwrap();
    s.set_cpus(2);
    let env = HostEnv {
        cpu: 2,
        ..Default::default()
    };
    let e = s.run_handler(0, &env).unwrap_err();
    assert_eq!(e.code, STP_RTE_BADOP);
    assert_eq!(s.stat_bytes(), 64 + 8 * STP_HIST_LOG_BUCKETS);
}

/// Statistics array `a[long]` (map 0, statistic 0) and scalar statistic 1
/// of the same histogram: handler 0 adds global 0 to both, under key
/// global 1; handler 1 reads every extractor of key global 1 into globals
/// 2..=7 and of the scalar into 8..=13; handler 2 emits key global 1's
/// histogram; handler 3 deletes key global 1.
fn array_prog(hist: Hist) -> Program {
    let ex = [
        STP_OP_STCOUNT,
        STP_OP_STSUM,
        STP_OP_STMIN,
        STP_OP_STMAX,
        STP_OP_STAVG,
        STP_OP_STVAR,
    ];
    let mut read = vec![i(STP_OP_LDG, 0, 0, 0, 1)];
    for (k, &op) in ex.iter().enumerate() {
        read.push(i(STP_OP_MSTX, 1, 0, 0, imm_pack(0, op as u16)));
        read.push(i(STP_OP_STG, 1, 0, 0, k as i32 + 2));
        read.push(i(op, 1, 0, 0, 1));
        read.push(i(STP_OP_STG, 1, 0, 0, k as i32 + 8));
    }
    read.push(RET);
    let mut p = program(vec![
        handler(
            STP_CTX_TIMER,
            2,
            0,
            vec![
                i(STP_OP_LDG, 0, 0, 0, 0),
                i(STP_OP_LDG, 1, 0, 0, 1),
                i(STP_OP_MSTADD, 0, 1, 0, 0),
                i(STP_OP_STADD, 0, 0, 0, 1),
                RET,
            ],
        ),
        handler(STP_CTX_END, 2, 0, read),
        handler(
            STP_CTX_END,
            1,
            0,
            vec![
                i(STP_OP_LDG, 0, 0, 0, 1),
                i(STP_OP_MSTHIST, 0, 0, 0, 0),
                RET,
            ],
        ),
        handler(
            STP_CTX_END,
            1,
            0,
            vec![i(STP_OP_LDG, 0, 0, 0, 1), i(STP_OP_MDEL, 0, 0, 0, 0), RET],
        ),
    ]);
    p.globals = long_globals(14);
    let a = |array| Stat {
        name: "a".into(),
        array,
        ..st(hist, true, 0)
    };
    p.stats = vec![a(true), a(false)];
    p.maps = vec![stat_array_map(4)];
    p
}

#[test]
fn statistics_arrays_merge_like_scalars_on_any_number_of_cpus() {
    let vals: Vec<i64> = (0..60).map(|k| (k * 7919) % 1000 - 300).collect();
    for cpus in [1, 2, 3, 16] {
        let mut s = HostSession::from_program(&array_prog(Hist::Log)).expect("verifies");
        s.set_cpus(cpus);
        for (k, &v) in vals.iter().enumerate() {
            s.set_global(0, v);
            // Key 5 gets every sample; key 6 only the first (another slot).
            s.set_global(1, 5);
            let env = HostEnv {
                cpu: (k as u32 % cpus) as i64,
                ..Default::default()
            };
            s.run_handler(0, &env).unwrap();
            if k == 0 {
                s.set_global(1, 6);
                s.run_handler(0, &env).unwrap();
            }
        }
        s.set_global(1, 5);
        s.run_handler(1, &HostEnv::default()).unwrap();
        let g = s.globals();
        // The scalar has one more sample (key 6's): compare all but it.
        assert_eq!(g[2], vals.len() as i64, "cpus {cpus}");
        assert_eq!(g[3], vals.iter().sum::<i64>());
        assert_eq!(g[4], *vals.iter().min().unwrap());
        assert_eq!(g[5], *vals.iter().max().unwrap());
        assert_eq!(g[8], vals.len() as i64 + 1);
        // The histogram record has the array statistic's id and buckets.
        s.run_handler(2, &HostEnv::default()).unwrap();
        let (stat, hist) = s
            .records()
            .into_iter()
            .find_map(|r| match r {
                Record::Hist { stat, hist, .. } => Some((stat, hist)),
                _ => None,
            })
            .unwrap();
        let mut want = vec![0i64; STP_HIST_LOG_BUCKETS as usize];
        for &v in &vals {
            want[bucket_of(&Hist::Log, v)] += 1;
        }
        assert_eq!(stat, 0);
        assert_eq!(hist.buckets, want, "cpus {cpus}");
        // Key 6: one sample; deleted, it is empty (count 0, @min an error),
        // and inserted again it starts from nothing on every CPU.
        s.set_global(1, 6);
        s.run_handler(1, &HostEnv::default()).unwrap();
        assert_eq!(s.globals()[2], 1);
        s.run_handler(3, &HostEnv::default()).unwrap();
        let e = s.run_handler(1, &HostEnv::default()).unwrap_err();
        assert_eq!(e.message, "empty aggregate");
        assert_eq!(s.globals()[2], 0, "@count of a deleted key");
        s.set_global(0, 42);
        s.run_handler(
            0,
            &HostEnv {
                cpu: (cpus - 1) as i64,
                ..Default::default()
            },
        )
        .unwrap();
        s.run_handler(1, &HostEnv::default()).unwrap();
        assert_eq!(&s.globals()[2..6], &[1, 42, 42, 42]);
    }
}

#[test]
fn statistics_array_buckets_merge_over_cpus() {
    // MSTBKT (opcodes.h): bucket global 2 of key global 1 into global 3.
    let mut p = array_prog(Hist::Log);
    p.handlers.push(handler(
        STP_CTX_END,
        2,
        0,
        vec![
            i(STP_OP_LDG, 0, 0, 0, 1),
            i(STP_OP_LDG, 1, 0, 0, 2),
            i(STP_OP_MSTBKT, 1, 0, 0, 0),
            i(STP_OP_STG, 1, 0, 0, 3),
            RET,
        ],
    ));
    let vals: Vec<i64> = (0..40).map(|k| (k * 7919) % 500 - 100).collect();
    let mut want = vec![0i64; STP_HIST_LOG_BUCKETS as usize];
    for &v in &vals {
        want[bucket_of(&Hist::Log, v)] += 1;
    }
    for cpus in [1, 3] {
        let mut s = HostSession::from_program(&p).expect("verifies");
        s.set_cpus(cpus);
        s.set_global(1, 5);
        for (k, &v) in vals.iter().enumerate() {
            s.set_global(0, v);
            let env = HostEnv {
                cpu: (k as u32 % cpus) as i64,
                ..Default::default()
            };
            s.run_handler(0, &env).unwrap();
        }
        let h = (p.handlers.len() - 1).try_into().expect("handler index");
        for (b, &n) in want.iter().enumerate() {
            s.set_global(2, b as i64);
            s.run_handler(h, &HostEnv::default()).unwrap();
            assert_eq!(s.globals()[3], n, "cpus {cpus} bucket {b}");
        }
        // Out of range (negative too): the run ends before the STG.
        for b in [want.len() as i64, -1] {
            s.set_global(2, b);
            s.set_global(3, 77);
            let e = s.run_handler(h, &HostEnv::default()).unwrap_err();
            assert_eq!(e.message, "histogram index out of range");
            assert_eq!(s.globals()[3], 77);
        }
        s.set_global(1, 9);
        s.set_global(2, 64);
        let e = s.run_handler(h, &HostEnv::default()).unwrap_err();
        assert_eq!(e.message, "empty aggregate");
    }
}
