// Command gin-gorm is a product catalogue on gin, its handlers methods on a struct, reading
// MariaDB (or MySQL) through gorm and go-sql-driver/mysql with gorm's default pool. The
// lookup is by SKU, a column with no index, over 50,000 rows: every request makes the
// database scan the whole table. Its one bottleneck is that query (an index on sku is the
// fix), the database doing the work while the service waits for its answer.
package main

import (
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/apiperf/apiperf/verdict/zoo/internal/ginsvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type product struct {
	ID    int `gorm:"primaryKey"`
	SKU   string
	Name  string
	Price float64
}

type catalogue struct {
	db *gorm.DB
}

func (c *catalogue) migrate() error {
	if err := c.db.AutoMigrate(&product{}); err != nil {
		return err
	}
	var n int64
	if err := c.db.Model(&product{}).Count(&n).Error; err != nil || n >= 50000 {
		return err
	}
	// 50,000 ids from five tables of the ten digits (portable to MariaDB and MySQL, which
	// cap a recursive query's iterations).
	digits := "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 " +
		"UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	from := ""
	for i, t := range []string{"a", "b", "c", "e", "f"} {
		if i > 0 {
			from += ", "
		}
		from += digits + " " + t
	}
	return c.db.Exec(`INSERT IGNORE INTO products (id, sku, name, price)
		SELECT n, CONCAT('sku-', n), CONCAT('Product ', n), n / 100 FROM
		(SELECT a.d + 10*b.d + 100*c.d + 1000*e.d + 10000*f.d + 1 AS n FROM ` + from + `) ids
		WHERE n <= 50000`).Error
}

// bySKU looks a product up by SKU (no index: a scan of the table each time).
func (c *catalogue) bySKU(ctx *gin.Context) {
	var p product
	if err := c.db.WithContext(ctx.Request.Context()).Where("sku = ?", ctx.Param("sku")).Take(&p).Error; err != nil {
		ctx.JSON(http.StatusNotFound, gin.H{"error": err.Error()})
		return
	}
	ctx.JSON(http.StatusOK, p)
}

func main() {
	db, err := gorm.Open(mysql.Open(svc.Env("MYSQL_DSN")), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		log.Fatal(err)
	}
	c := &catalogue{db: db}
	if err := c.migrate(); err != nil {
		log.Fatal(err)
	}
	r := ginsvc.New()
	r.GET("/products/:sku", c.bySKU)
	log.Fatal(http.Serve(svc.Listen(), r))
}
