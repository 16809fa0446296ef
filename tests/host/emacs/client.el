;; -*- lexical-binding: t -*-
;; Emacs's jsonrpc.el as a client of `weft serve --stdio --demo` (LSP
;; framing), for tests/host/emacs-jsonrpc.test.mjs:
;;   emacs --batch -Q -l client.el WEFT_BIN CASES.json OUT.json
;; CASES.json is an array of {"method", "params"}; OUT.json gets, for each,
;; {"result": …} or {"error": {"code", "message", "data"}} as jsonrpc.el
;; reported it. Values go through jsonrpc.el's own JSON conventions (objects
;; as plists, null as nil, false as :json-false) both ways.
(require 'jsonrpc)

(defun weft-test-read-json (file)
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8)) (insert-file-contents file))
    (json-parse-buffer :object-type 'plist :null-object nil :false-object :json-false)))

(let* ((args (prog1 command-line-args-left
               ;; Ours: Emacs would otherwise visit them as files afterwards
               ;; (and ask before opening a large one, forever in batch).
               (setq command-line-args-left nil)))
       (weft (nth 0 args))
       (cases (weft-test-read-json (nth 1 args)))
       (out (nth 2 args))
       (proc (make-process :name "weft" :command (list weft "serve" "--stdio" "--demo")
                           :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                           :stderr (get-buffer-create "*weft-stderr*")))
       (conn (make-instance 'jsonrpc-process-connection :name "weft" :process proc
                             ;; No event log: its pretty-printer fails on some keys.
                             :events-buffer-scrollback-size 0))
       (outcomes
        (mapcar (lambda (c)
                  (condition-case err
                      ;; jsonrpc.el names a method by a symbol.
                      (list :result (jsonrpc-request conn (intern (plist-get c :method))
                                                     (plist-get c :params) :timeout 10))
                    (jsonrpc-error
                     (list :error (list :code (alist-get 'jsonrpc-error-code (cdr err))
                                        :message (alist-get 'jsonrpc-error-message (cdr err))
                                        :data (alist-get 'jsonrpc-error-data (cdr err)))))))
                cases)))
  (let ((coding-system-for-write 'utf-8-unix))
    (with-temp-file out
      (insert (json-serialize (vconcat outcomes) :false-object :json-false :null-object nil))))
  (jsonrpc-shutdown conn))
(kill-emacs 0)
