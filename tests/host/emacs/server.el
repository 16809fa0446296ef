;; -*- lexical-binding: t -*-
;; Emacs's jsonrpc.el as a server on a Unix socket (LSP framing), for `weft
;; call --unix PATH --framing lsp` in tests/host/emacs-jsonrpc.test.mjs:
;;   emacs --batch -Q -l server.el PATH
;; It prints "listening" on stderr once PATH accepts connections. Methods:
;; echo (its params), subtract ([a, b] → a - b) and fail ({code, message}:
;; that error; jsonrpc.el 1.0.14 sends no error data).
(require 'jsonrpc)

(defun weft-test-dispatch (_conn method params)
  (pcase method
    ('echo params)
    ('subtract (- (aref params 0) (aref params 1)))
    ('fail (signal 'jsonrpc-error
                   `((jsonrpc-error-code . ,(plist-get params :code))
                     (jsonrpc-error-message . ,(plist-get params :message)))))
    (_ (signal 'jsonrpc-error `((jsonrpc-error-code . -32601)
                                (jsonrpc-error-message . ,(format "no method %s" method)))))))

(defvar weft-test-socket (pop command-line-args-left))  ; ours, not a file to visit

(make-network-process
 :name "weft-test-server" :server t :family 'local :service weft-test-socket :noquery t
 :log (lambda (_server client _message)
        (make-instance 'jsonrpc-process-connection :name "client" :process client
                       :events-buffer-scrollback-size 0  ; as in client.el
                       :request-dispatcher #'weft-test-dispatch :notification-dispatcher #'ignore)))
(princ "listening\n" #'external-debugging-output)
(while t (accept-process-output nil 1))
