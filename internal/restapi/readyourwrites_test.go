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

package restapi

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("Reads after a create answered before the cache showed it", func() {
	var (
		u      *unseenCreates
		cache  client.Client // what the cache shows: nothing, unless a spec puts it there
		now    time.Time
		metric = func(ns, name string) *evaluationv1alpha1.Metric {
			return &evaluationv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)}}
		}
	)
	BeforeEach(func() {
		now = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
		u = newUnseenCreates(10 * time.Second)
		u.now = func() time.Time { return now }
		cache = fake.NewClientBuilder().WithScheme(framework.Scheme()).Build()
	})
	// waiting runs u.wait in the background; the channel closes when it returns.
	waiting := func(ns string) chan struct{} {
		done := make(chan struct{})
		go func() { defer close(done); u.wait(context.Background(), ns) }()
		return done
	}

	It("wait until the cache shows the create", func() {
		a := metric("ns", "a")
		u.add(context.Background(), cache, a)
		done := waiting("ns")
		Consistently(done, 100*time.Millisecond).ShouldNot(BeClosed())
		u.seen(a)
		Eventually(done).Should(BeClosed())
	})

	It("do not wait when the cache showed the create before it was answered", func() {
		a := metric("ns", "a")
		Expect(cache.Create(context.Background(), a.DeepCopy())).To(Succeed())
		u.add(context.Background(), cache, a)
		Eventually(waiting("ns")).Should(BeClosed())
	})

	It("wait only for the creates before them, in their own namespace", func() {
		a, later, other := metric("ns", "a"), metric("ns", "later"), metric("other", "c")
		u.add(context.Background(), cache, a)
		u.add(context.Background(), cache, other)
		before := u.pendingIn("ns") // the read begins
		done := make(chan struct{})
		go func() { defer close(done); u.waitFor(context.Background(), "ns", before) }()
		u.add(context.Background(), cache, later)
		Consistently(done, 100*time.Millisecond).ShouldNot(BeClosed())
		u.seen(a)
		Eventually(done).Should(BeClosed(), "neither a later create nor another namespace's holds it")
	})

	It("stop waiting for a create the cache never shows once it expires", func() {
		u.add(context.Background(), cache, metric("ns", "gone"))
		now = now.Add(10 * time.Second)
		Eventually(waiting("ns")).Should(BeClosed())
	})

	It("stop waiting when the request ends", func() {
		u.add(context.Background(), cache, metric("ns", "a"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); u.wait(ctx, "ns") }()
		cancel()
		Eventually(done).Should(BeClosed())
	})
})
