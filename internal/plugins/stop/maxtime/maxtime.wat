;; max-time — stop policy, written in WebAssembly text (the third guest
;; language): stops (stop-keep) on the first token checked once max_ms
;; milliseconds have passed since the turn started, by the host's
;; realizar.clock_ns (which tests replace with a fake clock).
;;
;; Config: max_ms [60000], a non-negative integer of at most 12 digits.
;; Build: internal/plugins/build.sh wat (wabt's wat2wasm).
(module
  (import "realizar" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (import "realizar" "clock_ns" (func $clock_ns (result i64)))
  (import "realizar" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1)
  ;; 0..5: the key; 16..31: the value; 64..: the error message; 256..: the input region
  (data (i32.const 0) "max_ms")
  (data (i32.const 64) "max-time: max_ms must be an integer of at most 12 digits")
  (global $budget (mut i64) (i64.const 60000000000)) ;; nanoseconds
  (global $start (mut i64) (i64.const 0))

  (func (export "realizar_abi_v1_stop"))

  ;; realizar_init: read max_ms; the input region is max_piece bytes at 256.
  (func (export "realizar_init") (param $n_vocab i32) (param $max_piece i32) (param $cfg i32) (param $cfg_len i32) (result i64)
    (local $n i32) (local $i i32) (local $c i32) (local $v i64)
    (if (i32.or (i32.le_s (local.get $n_vocab) (i32.const 0)) (i32.le_s (local.get $max_piece) (i32.const 0)))
      (then (return (i64.const -3))))
    ;; grow the memory so that [256, 256 + max_piece) fits
    (local.set $c (i32.shr_u (i32.add (i32.add (local.get $max_piece) (i32.const 256)) (i32.const 65535)) (i32.const 16)))
    (if (i32.gt_u (local.get $c) (memory.size))
      (then (if (i32.eq (memory.grow (i32.sub (local.get $c) (memory.size))) (i32.const -1))
        (then (return (i64.const -1))))))
    (local.set $n (call $config_get (i32.const 0) (i32.const 6) (i32.const 16) (i32.const 16)))
    (if (i32.ge_s (local.get $n) (i32.const 0))
      (then
        (if (i32.or (i32.eqz (local.get $n)) (i32.gt_s (local.get $n) (i32.const 12)))
          (then (call $log (i32.const 3) (i32.const 64) (i32.const 56)) (return (i64.const -2))))
        (local.set $v (i64.const 0))
        (local.set $i (i32.const 0))
        (block $done
          (loop $digits
            (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
            (local.set $c (i32.load8_u (i32.add (i32.const 16) (local.get $i))))
            (if (i32.or (i32.lt_u (local.get $c) (i32.const 48)) (i32.gt_u (local.get $c) (i32.const 57)))
              (then (call $log (i32.const 3) (i32.const 64) (i32.const 56)) (return (i64.const -2))))
            (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10)) (i64.extend_i32_u (i32.sub (local.get $c) (i32.const 48)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $digits)))
        (global.set $budget (i64.mul (local.get $v) (i64.const 1000000)))))
    (i64.const 256))

  ;; realizar_reset: the turn starts now.
  (func (export "realizar_reset") (param $seed i64) (param $n_prompt i32) (result i32)
    (global.set $start (call $clock_ns))
    (i32.const 0))

  ;; realizar_check: stop-keep (1) once the budget is spent, else continue (0).
  (func (export "realizar_check") (param $token i32) (param $len i32) (result i32)
    (if (result i32) (i64.ge_s (i64.sub (call $clock_ns) (global.get $start)) (global.get $budget))
      (then (i32.const 1))
      (else (i32.const 0))))
)
