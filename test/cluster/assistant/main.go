/*
Copyright 2026 The eval-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command assistant is the system under test of the real-node canary
// (test/cluster): `assistant serve` answers questions on :8080, right or
// wrong as $ANSWERS says (right: the question in upper case; anything else:
// a wrong answer). The runs that judge it are executed by the operator's
// own kubectl eval exec.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var err error
	switch cmd := strings.Join(os.Args[1:], " "); cmd {
	case "serve":
		err = serve(ctx, os.Getenv("ANSWERS") == "right")
	default:
		err = fmt.Errorf("usage: assistant serve, not %q", cmd)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// question is the body of POST /answer; answer its answer.
type (
	question struct {
		Question string `json:"question"`
	}
	answer struct {
		Answer string `json:"answer"`
	}
)

func serve(ctx context.Context, right bool) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /answer", func(w http.ResponseWriter, r *http.Request) {
		var q question
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a := answer{Answer: "I am not sure."}
		if right {
			a.Answer = strings.ToUpper(q.Question)
		}
		_ = json.NewEncoder(w).Encode(a)
	})
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.WithoutCancel(ctx))
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
