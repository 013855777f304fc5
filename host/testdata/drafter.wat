;; meta: -abi 2 -kind drafter -name liar -version 1.0.0 -description "ABI 2 test drafter: its behaviour is its config's mode"
;; realizar_draft's behaviour is chosen by the config's "mode", one digit
;; (read at init through config_get; none: 0): 0 drafts max wrong-looking ids
;; ((calls*7 + j) mod n_vocab), 1 traps, 2 loops forever, 3 drafts an id
;; outside the vocabulary, 4 answers max+1, 5 answers the error code -1,
;; 6 grows memory past any cap then traps. In every mode it checks that
;; accepted_get gives n_new tokens (else it answers -4, state) and keeps
;; the number of tokens it was given (prompt included) and the sum of the
;; accepted counts reported; mode 7 drafts those two numbers.
(module
  (import "realizar" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (import "realizar" "accepted_get" (func $accepted_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; 0: mode; 4: n_vocab; 8: tokens seen; 12: accepted sum; 16: calls;
  ;; 64: the key "mode"; 1024: the draft region (32 ids); 4096: scratch.
  (data (i32.const 64) "mode")
  (func (export "realizar_abi_v2_drafter"))
  (func (export "realizar_init") (param $n i32) (param i32 i32 i32) (param i64) (result i64)
    (i32.store (i32.const 4) (local.get $n))
    (if (i32.eq (call $config_get (i32.const 64) (i32.const 4) (i32.const 0) (i32.const 1)) (i32.const 1))
      (then (i32.store (i32.const 0) (i32.sub (i32.load8_u (i32.const 0)) (i32.const 48)))))
    (i64.const 1024))
  (func (export "realizar_reset") (param i64) (param $np i32) (result i32)
    (i32.store (i32.const 8) (local.get $np))
    (i32.store (i32.const 12) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 0))
    (i32.const 0))
  (func (export "realizar_draft") (param $new i32) (param $max i32) (param $drafted i32) (param $acc i32) (result i32)
    (local $mode i32) (local $j i32) (local $calls i32)
    (if (i32.ne (call $accepted_get (i32.const 4096) (i32.const 0)) (local.get $new))
      (then (return (i32.const -4))))
    (i32.store (i32.const 8) (i32.add (i32.load (i32.const 8)) (local.get $new)))
    (i32.store (i32.const 12) (i32.add (i32.load (i32.const 12)) (local.get $acc)))
    (local.set $calls (i32.add (i32.load (i32.const 16)) (i32.const 1)))
    (i32.store (i32.const 16) (local.get $calls))
    (local.set $mode (i32.load (i32.const 0)))
    (if (i32.eq (local.get $mode) (i32.const 1)) (then unreachable))
    (if (i32.eq (local.get $mode) (i32.const 2)) (then (loop $forever (br $forever))))
    (if (i32.eq (local.get $mode) (i32.const 3)) (then
      (i32.store (i32.const 1024) (i32.load (i32.const 4)))
      (return (i32.const 1))))
    (if (i32.eq (local.get $mode) (i32.const 4)) (then (return (i32.add (local.get $max) (i32.const 1)))))
    (if (i32.eq (local.get $mode) (i32.const 5)) (then (return (i32.const -1))))
    (if (i32.eq (local.get $mode) (i32.const 6)) (then
      (drop (memory.grow (i32.const 1024)))
      unreachable))
    (if (i32.eq (local.get $mode) (i32.const 7)) (then
      (i32.store (i32.const 1024) (i32.load (i32.const 8)))
      (i32.store (i32.const 1028) (i32.load (i32.const 12)))
      (return (i32.const 2))))
    (block $done (loop $fill
      (br_if $done (i32.ge_u (local.get $j) (local.get $max)))
      (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $j) (i32.const 2)))
        (i32.rem_u (i32.add (i32.mul (local.get $calls) (i32.const 7)) (local.get $j)) (i32.load (i32.const 4))))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $fill)))
    (local.get $max))
)
