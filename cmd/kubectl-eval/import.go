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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/manifests"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// Environment variables import reads when the flags are not given.
const (
	envAPIURL = "EVAL_API_URL"
	envAPIKey = "EVAL_API_KEY" //nolint:gosec // the variable's name, not a key
)

type importOptions struct {
	kube      *kubeFlags
	getenv    func(string) string
	projectID string
	secret    string
	apiURL    string
	service   string
	keyFile   string
	output    string
	observe   bool
	ownKey    bool
	testsets  bool
	keyField  string
}

func newImportCommand(kube *kubeFlags, getenv func(string) string) *cobra.Command {
	o := &importOptions{kube: kube, getenv: getenv}
	cmd := &cobra.Command{
		Use:   "import --project-id ID [--namespace NS] [--secret NAME] [-o DIR|-] [--testsets --key-field FIELD -o DIR]",
		Short: "Write the service's Metrics (or Testsets) of a project as manifests that adopt them",
		Long: `Lists the Metrics of a project in the Evaluation Service and writes one Metric
manifest per remote Metric, with its metric-id annotation: applying them adopts the
remote Metrics instead of creating new ones, and their specs ask for exactly what the
service holds, so nothing changes upstream. With --observe they are read-only mirrors
(managementPolicies ["Observe"]): the cluster reads the Metrics and never writes to them.

With --testsets it imports the project's Testsets instead, into the directory -o
names: per Testset a manifest that adopts it (testset-id annotation) and reads its
testcases from a ConfigMap, its testcases as a JSON Lines file, and a
kustomization.yaml that generates each ConfigMap from its file. --key-field names
the field of the testcases' data that tells them apart (unique in each Testset).

The API key comes from --key-file, else $EVAL_API_KEY, else the Secret named by --secret
(data key apiKey) in the cluster of the kubeconfig. It is never printed. With --service,
the service's url, caBundle and key (its apiKeySecretRef) come from that EvaluationService
or ClusterEvaluationService of the cluster, and only that key is sent to its url: whoever
may edit the service chose the url, so your own key goes there only with --own-key.
The URL a key is sent to is printed on stderr before it is sent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.projectID, "project-id", "", "the project whose Metrics to import (required)")
	f.StringVar(&o.secret, "secret", "", "the Secret holding the API key: set as apiKeySecretRef, and read for the key when no other is given")
	f.StringVar(&o.apiURL, "api-url", "", "the service's base URL, ending in /api/v2 (default $"+envAPIURL+")")
	f.StringVar(&o.service, "service", "", "an EvaluationService (in the namespace) or ClusterEvaluationService of the cluster, as [Kind/]NAME: "+
		"its url, caBundle and key instead of --api-url and --secret")
	f.StringVar(&o.keyFile, "key-file", "", "a file holding the ak_ API key (default $"+envAPIKey+")")
	f.StringVarP(&o.output, "output", "o", "-", "a directory to write one file per Metric into, or - for one stream on stdout")
	f.BoolVar(&o.observe, "observe", false, `write read-only mirrors: managementPolicies ["Observe"], never a write to the service`)
	f.BoolVar(&o.ownKey, "own-key", false, "with --service, send your own key (--key-file, $"+envAPIKey+" or --secret) "+
		"to the service's url instead of the service's own key")
	f.BoolVar(&o.testsets, "testsets", false, "import the project's Testsets and their testcases instead of its Metrics (needs -o DIR and --key-field)")
	f.StringVar(&o.keyField, "key-field", "", "with --testsets, the field of each testcase's data that names it, unique in its Testset")
	_ = cmd.MarkFlagRequired("project-id")
	return cmd
}

func (o *importOptions) run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	if o.testsets && (o.keyField == "" || o.output == "-") {
		return usageError(errors.New("--testsets writes several files: give -o DIR, and --key-field"))
	}
	live, err := o.liveService(ctx)
	if err != nil {
		return err
	}
	if live.url == "" {
		return fmt.Errorf("no service: give --api-url or --service, or set $%s", envAPIURL)
	}
	key, source, err := o.key(ctx, live)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "sending the API key of %s to %s\n", source, live.url)
	svc := live.svc
	if svc == nil {
		if svc, err = evalapi.NewClient(evalapi.Options{BaseURL: live.url, UserAgent: userAgent}); err != nil {
			return fmt.Errorf("the service's URL: %w", err)
		}
	}
	opts := manifests.ImportOptions{
		ProjectID: o.projectID,
		// Only an explicit -n goes into the manifests: without it, whoever
		// applies them chooses.
		Namespace: o.kube.namespace,
		Secret:    o.secret,
		Observe:   o.observe,
	}
	if o.testsets {
		return o.importTestsets(cmd, svc, key, opts)
	}
	listed, err := manifests.ListAll(ctx, svc, key, o.projectID)
	if err != nil {
		return err
	}
	ms, err := manifests.Imported(listed, opts)
	if err != nil {
		return err
	}
	manifests.SortByName(ms)
	if o.output == "-" {
		return manifests.WriteStream(cmd.OutOrStdout(), ms)
	}
	paths, err := manifests.WriteDir(o.output, ms)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d Metric manifests to %s\n", len(paths), o.output)
	return nil
}

// importTestsets writes the project's Testsets and their testcases to -o.
func (o *importOptions) importTestsets(cmd *cobra.Command, svc evalapi.Service, key evalapi.APIKey,
	opts manifests.ImportOptions) error {
	sets, err := manifests.ImportTestsets(cmd.Context(), svc, key, o.keyField, opts)
	if err != nil {
		return err
	}
	tooLarge, err := manifests.WriteTestsetDir(o.output, sets)
	if err != nil {
		return err
	}
	n := 0
	for _, s := range sets {
		n += s.Testcases
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d Testsets with %d testcases to %s; apply them with kubectl apply -k %s\n",
		len(sets), n, o.output, o.output)
	for _, name := range tooLarge {
		fmt.Fprintf(cmd.ErrOrStderr(), "Testset %s: its testcases are over what a ConfigMap holds (1 MiB): "+
			"keep %s.jsonl in Git and read it through a Flux source (spec.sourceRef) instead\n", name, name)
	}
	return nil
}

// liveService is the service to import from: --service read from the
// cluster, else --api-url, else $EVAL_API_URL.
func (o *importOptions) liveService(ctx context.Context) (liveService, error) {
	if o.service == "" {
		if o.apiURL != "" {
			return liveService{url: o.apiURL}, nil
		}
		return liveService{url: o.getenv(envAPIURL)}, nil
	}
	if o.apiURL != "" {
		return liveService{}, errors.New("--api-url and --service: give one")
	}
	ref, err := parseServiceRef(o.service)
	if err != nil {
		return liveService{}, err
	}
	c, ns, err := o.kube.client()
	if err != nil {
		return liveService{}, err
	}
	return readService(ctx, c, ns, ref)
}

// key is the API key and where it came from: with --service, the
// service's own key unless --own-key; otherwise (or with it) the caller's.
// No message names its value.
func (o *importOptions) key(ctx context.Context, live liveService) (evalapi.APIKey, string, error) {
	if o.service != "" && !o.ownKey {
		return o.serviceKey(ctx, live)
	}
	return o.callerKey(ctx)
}

// callerKey is the caller's own key: --key-file, else $EVAL_API_KEY, else
// the --secret Secret in the cluster.
func (o *importOptions) callerKey(ctx context.Context) (evalapi.APIKey, string, error) {
	switch {
	case o.keyFile != "":
		data, err := os.ReadFile(o.keyFile)
		if err != nil {
			return "", "", fmt.Errorf("reading the API key: %w", err)
		}
		// A file's own line break ends the file, not the key.
		return checkKey(strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r"), o.keyFile)
	case o.getenv(envAPIKey) != "":
		return checkKey(o.getenv(envAPIKey), "$"+envAPIKey)
	case o.secret != "":
		return o.secretKey(ctx)
	case o.ownKey:
		return "", "", errors.New("--own-key: give --key-file, set $" + envAPIKey + ", or name the key's Secret with --secret")
	}
	return "", "", errors.New("no API key: give --key-file, set $" + envAPIKey + ", name the key's Secret with --secret, " +
		"or use a --service that names one")
}

// checkKey refuses a key the operator would refuse (whitespace, a line
// break, no ak_ prefix), naming where it came from, never its value.
func checkKey(raw, source string) (evalapi.APIKey, string, error) {
	key := evalapi.APIKey(raw)
	if !key.Valid() {
		return "", "", fmt.Errorf("the API key in %s is not an API key (%s followed by at least %d visible ASCII "+
			"characters, no whitespace or line break, as the operator requires); it was not sent",
			source, evalapi.KeyPrefix, evalapi.MinKeySecretLen)
	}
	return key, source, nil
}

// serviceKey is the key --service names for itself, read as the manager
// reads it.
func (o *importOptions) serviceKey(ctx context.Context, live liveService) (evalapi.APIKey, string, error) {
	secret, field, ok := live.of.KeySecret()
	if !ok {
		return "", "", fmt.Errorf("--service %s names no apiKeySecretRef: to send your own key to its url %s, add --own-key",
			o.service, live.url)
	}
	key, err := live.of.Key(ctx)
	return keyRead(key, secret, field, err)
}

// secretKey reads the key in the --secret Secret, in the kubeconfig's
// namespace, with the manager's own rules and messages (remote.ReadKey).
func (o *importOptions) secretKey(ctx context.Context) (evalapi.APIKey, string, error) {
	c, ns, err := o.kube.client()
	if err != nil {
		return "", "", err
	}
	ref := v1alpha1.SecretKeySelector{Name: o.secret}
	key, err := remote.ReadKey(ctx, c, ns, ref)
	return keyRead(key, types.NamespacedName{Namespace: ns, Name: ref.Name}, v1alpha1.DefaultAPIKeySecretKey, err)
}

// keyRead is a key read from field of secret, and the source to name it by.
func keyRead(key evalapi.APIKey, secret types.NamespacedName, field string, err error) (evalapi.APIKey, string, error) {
	if err != nil {
		return "", "", fmt.Errorf("reading the API key in namespace %s: %w", secret.Namespace, err)
	}
	return key, fmt.Sprintf("Secret %s key %s", secret, field), nil
}
