import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:', {autoinstall_known_extensions:'false',autoload_known_extensions:'false'});
const c = await db.connect();
const r = await c.runAndReadAll("select function_type, string_agg(distinct function_name, ' ' order by function_name) from duckdb_functions() where function_type in ('table','pragma','table_macro') group by 1");
for (const row of r.getRows()) console.log(row[0], ':', row[1]);
