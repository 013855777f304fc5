;; meta: -kind sampler -name bad -version 1.0.0 -description "misbehaves on request; greedy otherwise"
;; The runtime half of the bad-plugin suite in one module, so that the same
;; Session can misbehave in one turn and work in the next:
;;   init:   config key "refuse" present -> ErrConfig; clock_ns() == 13 ->
;;           loops forever; clock_ns() == 14 -> unreachable
;;   reset:  seed 7 -> loops forever; seed 8 -> unreachable
;;   sample, by the turn's seed:
;;     1 loops forever        2 unreachable           3 grows memory until refused, then traps
;;     4 returns -1           5 returns n_vocab       6 argmax, then garbage over its own buffer
;;     9 logs a line and returns -1
;;     10 grows memory until refused, then loops forever (the deadline fires
;;        after the cap was reached: reported as the memory cap)
;;     anything else: argmax
(module
  (import "realizar" "clock_ns" (func $clock_ns (result i64)))
  (import "realizar" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (import "realizar" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 64) "refuse")
  (data (i32.const 80) "mode 9: giving up")
  (global $buf (mut i32) (i32.const 0))
  (global $mode (mut i32) (i32.const 0))
  (global $n (mut i32) (i32.const 0))
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param $cp i32) (param $cl i32) (result i64)
    (local $old i32) (local $t i64)
    (if (i32.ge_s (call $config_get (i32.const 64) (i32.const 6) (i32.const 0) (i32.const 0)) (i32.const 0))
      (then (return (i64.const -2))))
    (local.set $t (call $clock_ns))
    (if (i64.eq (local.get $t) (i64.const 13)) (then (loop $forever (br $forever))))
    (if (i64.eq (local.get $t) (i64.const 14)) (then unreachable))
    (global.set $n (local.get $n))
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 4)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (global.set $buf (i32.mul (local.get $old) (i32.const 65536)))
    (i64.extend_i32_u (global.get $buf)))
  (func (export "realizar_reset") (param $seed i64) (param $np i32) (result i32)
    (global.set $mode (i32.wrap_i64 (local.get $seed)))
    (if (i32.eq (global.get $mode) (i32.const 7)) (then (loop $forever (br $forever))))
    (if (i32.eq (global.get $mode) (i32.const 8)) (then unreachable))
    (i32.const 0))
  (func $argmax (param $count i32) (result i32)
    (local $i i32) (local $best i32) (local $bv f32) (local $v f32)
    (local.set $bv (f32.load (global.get $buf)))
    (local.set $i (i32.const 1))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      (local.set $v (f32.load (i32.add (global.get $buf) (i32.shl (local.get $i) (i32.const 2)))))
      (if (f32.gt (local.get $v) (local.get $bv))
        (then (local.set $bv (local.get $v)) (local.set $best (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.get $best))
  (func (export "realizar_sample") (param $prev i32) (param $count i32) (result i32)
    (local $i i32) (local $r i32)
    (if (i32.eq (global.get $mode) (i32.const 1)) (then (loop $forever (br $forever))))
    (if (i32.eq (global.get $mode) (i32.const 2)) (then unreachable))
    (if (i32.eq (global.get $mode) (i32.const 3))
      (then (loop $grow
        (br_if $grow (i32.ge_s (memory.grow (i32.const 16)) (i32.const 0))))
        unreachable))
    (if (i32.eq (global.get $mode) (i32.const 10))
      (then (loop $grow
        (br_if $grow (i32.ge_s (memory.grow (i32.const 16)) (i32.const 0))))
        (loop $forever (br $forever))))
    (if (i32.eq (global.get $mode) (i32.const 4)) (then (return (i32.const -1))))
    (if (i32.eq (global.get $mode) (i32.const 5)) (then (return (global.get $n))))
    (if (i32.eq (global.get $mode) (i32.const 9))
      (then (call $log (i32.const 3) (i32.const 80) (i32.const 17)) (return (i32.const -1))))
    (local.set $r (call $argmax (local.get $count)))
    (if (i32.eq (global.get $mode) (i32.const 6))
      (then
        (local.set $i (i32.const 0))
        (block $done (loop $fill
          (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
          (i32.store (i32.add (global.get $buf) (i32.shl (local.get $i) (i32.const 2))) (i32.const 0x7fc0dead))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $fill)))))
    (local.get $r))
)
