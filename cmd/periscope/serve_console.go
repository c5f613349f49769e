package main

import (
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/console"
)

// setupConsole serves the web console (internal/console) beside the API,
// on the same address: its pages reach data only through the API's routes.
func setupConsole(svc *services) {
	svc.onServer = append(svc.onServer, func(srv *api.Server) error {
		c, err := console.New(console.Config{Version: version}, srv, svc.store, svc.store, alertstore.New(svc.store), svc.log)
		if err != nil {
			return err
		}
		c.Mount()
		return nil
	})
}
