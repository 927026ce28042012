// Command pq-unindexed is a customer lookup on plain net/http, its handlers methods on a
// struct, reading PostgreSQL through database/sql and lib/pq with an unbounded pool. The
// lookup is by e-mail, a column with no index, over 200,000 rows: every request makes
// PostgreSQL scan the whole table. Its one bottleneck is that query (an index on email is
// the fix), the database doing the work while the service waits for its answer.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
	"net/http"
	_ "net/http/pprof"

	_ "github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type customers struct {
	db *sql.DB
}

func (c *customers) migrate() error {
	_, err := c.db.Exec(`CREATE TABLE IF NOT EXISTS customers (id int PRIMARY KEY, email text NOT NULL, name text NOT NULL);
		INSERT INTO customers SELECT g, 'user' || g || '@example.com', 'Customer ' || g FROM generate_series(1, 200000) g ON CONFLICT DO NOTHING;
		ANALYZE customers`)
	return err
}

// find looks a customer up by e-mail (no index: a scan of the table each time).
func (c *customers) find(w http.ResponseWriter, r *http.Request) {
	var id int
	var name string
	err := c.db.QueryRowContext(r.Context(), `SELECT id, name FROM customers WHERE email = $1`, r.URL.Query().Get("email")).Scan(&id, &name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": id, "name": name})
}

func main() {
	db, err := sql.Open("postgres", svc.Env("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxIdleConns(64)
	c := &customers{db: db}
	if err := c.migrate(); err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", promhttp.Handler())
	http.HandleFunc("/customers", c.find)
	log.Fatal(http.Serve(svc.Listen(), nil))
}
