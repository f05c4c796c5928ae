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
// a wrong answer), and `assistant execute` is an EvaluationRun's executor:
// it asks the system at $SYSTEM_URL each testcase's question and writes a
// record per testcase, and a score per Metric of the run (true when the
// answer is the expected one), through the Evaluation Service API at
// $EVAL_API_URL, as the operator tells it.
package main

import (
	"bytes"
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

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var err error
	switch cmd := strings.Join(os.Args[1:], " "); cmd {
	case "serve":
		err = serve(ctx, os.Getenv("ANSWERS") == "right")
	case "execute":
		err = execute(ctx)
	default:
		err = fmt.Errorf("usage: assistant serve|execute, not %q", cmd)
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

func execute(ctx context.Context) error {
	api, err := evalapi.NewClient(evalapi.Options{BaseURL: os.Getenv("EVAL_API_URL")})
	if err != nil {
		return err
	}
	key := evalapi.APIKey(os.Getenv("EVAL_API_KEY"))
	runID := os.Getenv("EVAL_RUN_ID")
	run, err := api.GetRun(ctx, key, runID)
	if err != nil {
		return fmt.Errorf("reading run %s: %w", runID, err)
	}
	opts := evalapi.ListOptions{Limit: 100}
	for {
		page, err := api.ListTestcases(ctx, key, os.Getenv("EVAL_TESTSET_ID"), opts)
		if err != nil {
			return fmt.Errorf("listing the testcases: %w", err)
		}
		for _, tc := range page.Data {
			if err := record(ctx, api, key, run, tc); err != nil {
				return fmt.Errorf("testcase %s: %w", tc.ID, err)
			}
		}
		if !page.HasMore {
			return nil
		}
		opts.Cursor = *page.NextCursor
	}
}

// record asks the system tc's question and writes its record and scores.
func record(ctx context.Context, api *evalapi.Client, key evalapi.APIKey, run evalapi.Run, tc evalapi.Testcase) error {
	var in question
	var want answer
	if err := errors.Join(json.Unmarshal(tc.Inputs, &in), json.Unmarshal(tc.Expected, &want)); err != nil {
		return err
	}
	got, err := ask(ctx, in)
	if err != nil {
		return err
	}
	outputs, _ := json.Marshal(got)
	rec, err := api.CreateRecord(ctx, key, run.ID, evalapi.RecordRequest{TestcaseID: tc.ID,
		Inputs: tc.Inputs, Expected: tc.Expected, Outputs: outputs})
	if err != nil {
		return fmt.Errorf("writing the record: %w", err)
	}
	score, _ := json.Marshal(map[string]any{"value": got.Answer == want.Answer,
		"reasoning": fmt.Sprintf("answered %q, expected %q", got.Answer, want.Answer)})
	for _, m := range run.MetricIDs {
		if _, err := api.UpsertScore(ctx, key, rec.ID, m, score); err != nil {
			return fmt.Errorf("writing the score of %s: %w", m, err)
		}
	}
	log.Printf("testcase %s: answered %q, expected %q", tc.ID, got.Answer, want.Answer)
	return nil
}

// ask asks the system at $SYSTEM_URL, retrying while it comes up.
func ask(ctx context.Context, q question) (answer, error) {
	body, _ := json.Marshal(q)
	var a answer
	var err error
	for range 30 {
		var resp *http.Response
		// The system under test is wherever the run's template says.
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, os.Getenv("SYSTEM_URL"), bytes.NewReader(body)) //nolint:gosec
		req.Header.Set("Content-Type", "application/json")
		resp, err = http.DefaultClient.Do(req) //nolint:gosec // as above
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&a)
			_ = resp.Body.Close()
			if err == nil {
				return a, nil
			}
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return a, fmt.Errorf("asking the system: %w", err)
}
