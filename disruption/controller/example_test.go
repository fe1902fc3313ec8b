package controller_test

import (
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/karpgate/karpgate/disruption/controller"
)

// The loop inside a server's manager: the cache and /status on every
// replica, reconciles on the leader only.
func ExampleSetup() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		LeaderElection:   true,
		LeaderElectionID: "karpgate",
	})
	if err != nil {
		panic(err)
	}
	loop, err := controller.Setup(mgr, controller.Options{
		Guard: controller.GuardOptions{Enabled: true, ReadyTimeout: 20 * time.Minute},
	})
	if err != nil {
		panic(err)
	}
	http.Handle("/status", loop.StatusHandler())
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		panic(err)
	}
}
